"""One module per command: parse options, call a capability, hand its result to render."""
