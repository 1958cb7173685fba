"""Which function a key was compiled from, decided once: frames, origin, listing."""
