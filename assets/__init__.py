"""Icons and style sheets of the workbench window."""
