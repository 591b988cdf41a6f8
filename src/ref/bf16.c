/*
 * Host bf16 <-> fp32 conversion for the references, the generator and the tests.
 * bf16 is the top 16 bits of an IEEE fp32; conversion to bf16 rounds to nearest even, NaN stays
 * a (quiet) NaN with its sign, infinities stay infinities.
 */
#include <string.h>
#include "ref.h"

uint16_t mla_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u)          /* NaN: keep it NaN (rounding could make it inf) */
        return (uint16_t)((x >> 16) | 0x0040u);
    x += 0x7fffu + ((x >> 16) & 1u);              /* round to nearest, ties to even */
    return (uint16_t)(x >> 16);
}

float mla_bf16_to_f32(uint16_t b)
{
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}
