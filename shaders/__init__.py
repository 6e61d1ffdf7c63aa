"""GLSL sources for hydro, shipped as package data (`hydro.shaders`). One file per pass."""
