// A cell's faces (common/model.glsl's Faces) from face_value(k, f), the value of face f of axis k,
// which the including pass defines (as the flow textures hold it, accelerated, or scaled): the one
// place that says which faces are a cell's. Needs fragment/lattice.glsl.
float face_value(int k, ivec2 f);

Faces faces_around(ivec2 c) {
    Faces f;
    f.left = face_value(0, c);
    f.right = face_value(0, c + ivec2(1, 0));
    f.bottom = face_value(1, c);
    f.top = face_value(1, c + ivec2(0, 1));
#if HEX
    f.z_in = face_value(2, c + ivec2(1, 0));
    f.z_out = face_value(2, c + ivec2(0, 1));
#endif
    return f;
}
