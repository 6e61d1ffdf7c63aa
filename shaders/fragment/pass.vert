#version 410
// One triangle over the whole render target: each pass of the fragment backend (hydro/water_fragment.py)
// runs its fragment shader once per texel of the texture it writes.
void main() {
    vec2 corner = vec2((gl_VertexID << 1) & 2, gl_VertexID & 2);
    gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}
