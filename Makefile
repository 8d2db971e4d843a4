# `make run` and `make test` do all set-up on a fresh machine (see README).
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PACKAGING_STAMP := $(VENV)/.packaging
SYSTEM_PACKAGES := libportaudio2 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 \
	libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xkb1 libxkbcommon-x11-0 libegl1 \
	libgl1 libfontconfig1 libdbus-1-3 xvfb xauth pulseaudio pulseaudio-utils libasound2-plugins \
	desktop-file-utils xdotool xterm appstream binutils libwayland-cursor0 libwayland-egl1
PYTEST := HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) -m pytest -q -ra

.PHONY: run test test-all system-deps bench screenshots clean package

$(STAMP): pyproject.toml scripts/install_torch.sh
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	scripts/install_torch.sh $(PY)
	$(PY) -m pip install -q -e '.[multilingual,diarization,test,cluster]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/ferrum-gui

# Quick tier: only the repository's own data (tests/data), no slow tests; see tests/README.md.
test: $(STAMP)
	FERRUM_EVAL_DIR=off $(PYTEST) -m "not slow and not eval" --durations=10

# Everything: the evaluation sets (FERRUM_EVAL_DIR, default ../shared/eval; skipped with the reason when
# absent) and the slow tier, which builds, installs and removes the .deb (as root, with dpkg and apt).
test-all: $(STAMP) $(PACKAGING_STAMP)
	$(PYTEST) --durations=25

# An extra may pull the obsolete `typing` backport, which PyInstaller refuses to run
# beside; Python 3 has it in the standard library, so it goes.
$(PACKAGING_STAMP): $(STAMP)
	$(PY) -m pip install -q -e '.[packaging]'
	$(PY) -m pip uninstall -y -q typing
	touch $(PACKAGING_STAMP)

bench: $(STAMP)
	$(PY) bench/transcribe.py && $(PY) bench/embed.py && $(PY) bench/search.py

screenshots: $(STAMP)
	xvfb-run -a -s "-screen 0 1600x1000x24" $(PY) scripts/screenshots.py
	xvfb-run -a -s "-screen 0 1600x1000x24" $(PY) scripts/screenshots_anywhere.py

# One-folder PyInstaller bundle in packaging/dist/ferrum-desktop, then packaging/dist/ferrum-desktop_*.deb
# (see packaging/README.md).
package: $(PACKAGING_STAMP)
	nice $(PY) packaging/build.py
	nice $(PY) packaging/linux/build_deb.py

# Debian/Ubuntu packages the app and its tests use (PortAudio, Qt's xcb plugin, Xvfb, PulseAudio).
system-deps:
	apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(SYSTEM_PACKAGES)

clean:
	rm -rf $(VENV) build *.egg-info
