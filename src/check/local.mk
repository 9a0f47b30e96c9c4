# substrate qualification probes: filled in below
