/* image.cl — images and samplers, which the PTX path refuses with a message. */
kernel void image_read(read_only image2d_t im, sampler_t s, global float4 *out) {
  out[0] = read_imagef(im, s, (int2)(0, 0));
}
