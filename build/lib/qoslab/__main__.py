"""``python -m qoslab`` runs the CLI."""
from .cli import main

main()
