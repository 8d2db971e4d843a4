"""Audio in: decoding and resampling files, voice activity, live capture and its ring buffer."""
