#!/usr/bin/env bash
# Install (or remove) Ferrum Desktop's menu entry and hicolor icons for the current user.
#
#   install-desktop-entry.sh [--prefix DIR] [--exec PATH] [--no-validate]
#   install-desktop-entry.sh --uninstall [--prefix DIR]
#
# Files go to ${XDG_DATA_HOME:-~/.local/share} (or DIR/share with --prefix):
#   applications/ferrum-desktop.desktop, icons/hicolor/<N>x<N>/apps/ferrum-desktop.png,
#   icons/hicolor/scalable/apps/ferrum-desktop.svg
# Exec= points at PATH, by default the ferrum-gui of the active venv, else the checkout's .venv,
# else the one on $PATH (give the PyInstaller bundle's ferrum-gui with --exec to use that).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RESOURCES="$(cd "$HERE/../../resources" && pwd)"
APP_ID="ferrum-desktop"

die() { echo "install-desktop-entry: $1" >&2; [ $# -gt 1 ] && echo "  hint: $2" >&2; exit 1; }

prefix="" exec_path="" uninstall=0 validate=1
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || die "--prefix needs a folder"; prefix="$2"; shift 2 ;;
        --exec) [ $# -ge 2 ] || die "--exec needs a path"; exec_path="$2"; shift 2 ;;
        --uninstall) uninstall=1; shift ;;
        --no-validate) validate=0; shift ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1" "see --help" ;;
    esac
done

if [ -n "$prefix" ]; then data_dir="$prefix/share"; else data_dir="${XDG_DATA_HOME:-$HOME/.local/share}"; fi
apps_dir="$data_dir/applications"
icons_dir="$data_dir/icons/hicolor"
desktop_file="$apps_dir/$APP_ID.desktop"

# every file this script owns, one per line
owned_files() {
    echo "$desktop_file"
    for png in "$RESOURCES"/icons/"$APP_ID"-*.png; do
        size="${png##*-}"; size="${size%.png}"
        echo "$icons_dir/${size}x${size}/apps/$APP_ID.png"
    done
    echo "$icons_dir/scalable/apps/$APP_ID.svg"
}

refresh_caches() {
    if command -v update-desktop-database >/dev/null; then update-desktop-database -q "$apps_dir" 2>/dev/null || true; fi
    if command -v gtk-update-icon-cache >/dev/null && [ -f "$icons_dir/index.theme" ]; then
        gtk-update-icon-cache -q -t "$icons_dir" 2>/dev/null || true
    fi
}

if [ "$uninstall" = 1 ]; then
    removed=0
    while IFS= read -r f; do
        if [ -e "$f" ]; then rm -f "$f"; removed=$((removed + 1)); fi
    done < <(owned_files)
    [ -d "$apps_dir" ] && refresh_caches
    echo "removed $removed files from $data_dir"
    exit 0
fi

if [ -z "$exec_path" ]; then
    for candidate in "${VIRTUAL_ENV:-}/bin/ferrum-gui" "$HERE/../../.venv/bin/ferrum-gui" "$(command -v ferrum-gui || true)"; do
        if [ -n "$candidate" ] && [ -x "$candidate" ]; then exec_path="$candidate"; break; fi
    done
    [ -n "$exec_path" ] || die "no ferrum-gui found" "run 'make run' once (creates .venv), or pass --exec /path/to/ferrum-gui"
fi
[ -x "$exec_path" ] || die "$exec_path is not an executable file" "pass --exec with the path of ferrum-gui"
exec_path="$(cd "$(dirname "$exec_path")" && pwd)/$(basename "$exec_path")"
case "$exec_path" in
    *[\"\`\$\\]*) die "the path $exec_path has a character a .desktop Exec= line cannot hold" "install the venv under a plainer path" ;;
esac

mkdir -p "$apps_dir"
tmp_dir="$(mktemp -d)"
trap 'rm -rf "$tmp_dir"' EXIT
tmp="$tmp_dir/$APP_ID.desktop"  # desktop-file-validate wants the .desktop extension
# quoted so that a path with spaces stays one argument (Desktop Entry spec, "The Exec key")
sed -e "s|^Exec=ferrum-gui|Exec=\"$exec_path\"|" -e "s|^TryExec=.*|TryExec=$exec_path|" \
    "$RESOURCES/$APP_ID.desktop" > "$tmp"
grep -q "^Exec=\"$exec_path\"" "$tmp" || die "resources/$APP_ID.desktop has no 'Exec=ferrum-gui' line" "restore the file from git"
if [ "$validate" = 1 ]; then
    if command -v desktop-file-validate >/dev/null; then
        desktop-file-validate "$tmp" || die "the generated .desktop file is invalid (see above)" "fix resources/$APP_ID.desktop"
    else
        echo "install-desktop-entry: desktop-file-validate not found, skipping validation (apt-get install desktop-file-utils)" >&2
    fi
fi
install -m 644 "$tmp" "$desktop_file"

for png in "$RESOURCES"/icons/"$APP_ID"-*.png; do
    size="${png##*-}"; size="${size%.png}"
    install -D -m 644 "$png" "$icons_dir/${size}x${size}/apps/$APP_ID.png"
done
install -D -m 644 "$RESOURCES/$APP_ID.svg" "$icons_dir/scalable/apps/$APP_ID.svg"
refresh_caches
echo "installed $desktop_file (Exec: $exec_path) and icons under $icons_dir"
