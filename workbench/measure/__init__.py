"""Measuring: the engine, its supervised process, sampling, the hardware limits and the GPU sessions."""
