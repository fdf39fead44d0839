"""One module per corpus category (spec §12.4). Each exposes ``generate(ctx, n)``."""
