#version 410
// Renderer.track_deposits on the fragment backend (GL 4.1): deposit_reference.comp's copy as a
// render-to-texture pass (fragment/pass.vert) into the reference texture, its viewport the rectangle of
// cells: the terrain there becomes the reference that fresh deposits are measured from.
#include "fragment/grid.glsl"

uniform sampler2D u_terrain;

layout(location = 0) out float o_reference;

void main() {
    o_reference = face_at(u_terrain, texel());
}
