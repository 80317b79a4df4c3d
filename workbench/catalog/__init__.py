"""What can be measured: workloads registered by declaration, and the backends that run them."""
