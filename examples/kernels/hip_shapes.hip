// hip_shapes.hip — HIP device code that allocates with new, new[], delete, malloc and free
// (examples/hip_new.c runs it through OpenCL). Each thread builds a small scene: a list of
// shapes made with new (squares and circles, told apart by a kind field), their areas in an
// array made with new[], a label made with malloc; the scene outlives the kernel. A second kernel sums the areas, checks the label and deletes everything.
// Compiled for SPIR-V by clang's HIP front end with no HIP headers (hip_device.h declares what
// a HIP device library would) and translated by llvm-spirv: cmake/CldmOpenCL.cmake.
#include "hip_device.h"

struct Shape {
  int kind; // 0 square, 1 circle
  float size;
  Shape *next;
  __device__ Shape(int k, float s, Shape *n) : kind(k), size(s), next(n) {}
  __device__ float area() const { return kind == 0 ? size * size : 3.0f * size * size; }
};

struct Scene {
  Shape *shapes;
  float *areas; // new[]: one per shape
  char *label;  // malloc: "scene <id>"
  int count;
};

// Builds thread id's scene: id % 7 + 1 shapes, sizes 1, 2, ...; scenes[id] keeps it.
extern "C" __global__ void scene_build(Scene **scenes) {
  unsigned int id = threadIdx.x + blockDim.x * blockIdx.x;
  Scene *s = new Scene;
  s->count = (int)(id % 7) + 1;
  s->shapes = nullptr;
  for (int k = s->count; k >= 1; k--)
    s->shapes = new Shape((int)(id + k) % 2, (float)k, s->shapes);
  s->areas = new float[s->count];
  int k = 0;
  for (Shape *p = s->shapes; p; p = p->next)
    s->areas[k++] = p->area();
  s->label = static_cast<char *>(malloc(16));
  const char text[] = "scene ";
  for (int i = 0; i < 6; i++)
    s->label[i] = text[i];
  s->label[6] = (char)('0' + id % 10);
  s->label[7] = '\0';
  scenes[id] = s;
}

// Sums each scene's areas into totals[id], counts what is wrong with it (areas, count, label)
// in bad[id], and deletes every scene.
extern "C" __global__ void scene_sum_delete(Scene **scenes, float *totals, int *bad) {
  unsigned int id = threadIdx.x + blockDim.x * blockIdx.x;
  Scene *s = scenes[id];
  float total = 0.0f;
  int k = 0, wrong = 0;
  for (Shape *p = s->shapes; p;) {
    Shape *next = p->next;
    wrong += s->areas[k++] != p->area();
    total += p->area();
    delete p;
    p = next;
  }
  wrong += k != s->count || s->label[6] != (char)('0' + id % 10);
  totals[id] = total;
  bad[id] = wrong;
  delete[] s->areas;
  free(s->label);
  delete s;
  scenes[id] = nullptr;
}
