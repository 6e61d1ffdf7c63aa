// Fresh sediment for the terrain and water passes (Renderer.track_deposits): silt over the ground the
// water raised or carries sediment over, muddy water where it carries much. Nothing is read while
// u_track_deposits is false, so a renderer that tracks none draws as it would without this file.
uniform sampler2D u_deposits;          // rg32f (deposits.comp): fresh sediment height, sediment / depth
uniform bool u_track_deposits;
uniform vec3 u_silt_color;
uniform float u_silt_depth;            // fresh sediment this deep covers the ground fully, world units
uniform float u_mud_concentration;     // sediment / depth at which the water is fully muddy

float silt_cover(vec2 uv) {
    return u_track_deposits ? smoothstep(0.0, u_silt_depth, texture(u_deposits, uv).r) : 0.0;
}

float mud(vec2 uv) {
    return u_track_deposits ? smoothstep(0.0, u_mud_concentration, texture(u_deposits, uv).g) : 0.0;
}
