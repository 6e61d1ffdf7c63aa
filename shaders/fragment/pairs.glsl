// Float pairs: an unevaluated sum hi + lo of two floats, about twice float's precision, built on
// common/model.glsl's sum_error (Knuth's TwoSum; include model.glsl first). book.frag keeps the ledger
// in them, fragment/stats.glsl the sum of the depths, gauge.frag what crossed each gauge.

// hi + lo as a pair whose hi holds the leading bits (renormalised: |lo| <= half an ulp of hi).
vec2 renormalised(float hi, float lo) {
    precise float total = hi + lo;
    return vec2(total, sum_error(hi, lo, total));
}

// The sum of pairs a and b (the accurate double-word sum: both parts' errors kept, renormalised twice).
vec2 pair_sum(vec2 a, vec2 b) {
    precise float hi = a.x + b.x, lo = a.y + b.y;
    precise float hi_error = sum_error(a.x, b.x, hi), lo_error = sum_error(a.y, b.y, lo);
    precise float head_lo = hi_error + lo;
    vec2 s = renormalised(hi, head_lo);
    precise float tail = s.y + lo_error;
    return renormalised(s.x, tail);
}

// The rounding error of float product p = a * b (Dekker's TwoProduct, Veltkamp's split): p + error is
// a * b exactly. Plain float operations, as fma() need not be fused (a GL 4.1 driver may split it).
float product_error(float a, float b, float p) {
    precise float a_big = 4097.0 * a, b_big = 4097.0 * b;
    precise float a_hi = a_big - (a_big - a), b_hi = b_big - (b_big - b);
    precise float a_lo = a - a_hi, b_lo = b - b_hi;
    precise float error = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo;
    return error;
}

// Pair `booked` plus the product a * b, the product's rounding kept (TwoProduct) and the sum's (TwoSum),
// renormalised so hi keeps the leading bits: book.frag's and book_sediment.frag's substep.
vec2 pair_add_product(vec2 booked, float a, float b) {
    precise float product = a * b;
    precise float hi = booked.x + product;
    precise float lo = booked.y + (sum_error(booked.x, product, hi) + product_error(a, b, product));
    return renormalised(hi, lo);
}
