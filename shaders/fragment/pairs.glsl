// Float pairs: an unevaluated sum hi + lo of two floats, about twice float's precision, built on
// common/model.glsl's sum_error (Knuth's TwoSum; include model.glsl first). book.frag keeps the ledger
// in them, fragment/stats.glsl the sum of the depths.

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
