"""What an FX graph key is made of: its components, torch's defaults, the installed torch."""
