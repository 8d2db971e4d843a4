"""Engine foundations: the executor contract, its types, errors, devices, live stats, paths."""
