;
; cldm_ptx_overrides.ll — OpenCL C built-ins the PTX path defines itself instead of taking
; libclc-15's (nvptx64--nvidiacl.bc), linked into every module before libclc so these win.
;
; Work-item functions read the environment registers exactly as NVIDIA's own OpenCL compiler
; does (its PTX for get_global_id(0) is tid.x + ntid.x*ctaid.x + %envreg3), so that global work
; offsets and launches the driver splits into several grids are honoured; libclc ignores both.
;   %envreg0..2  group-id offset of this grid (x, y, z)
;   %envreg3..5  global offset + group-id offset * local size (x, y, z)
;   %envreg6..8  number of work-groups of the whole NDRange (x, y, z)
;   %envreg9     work dimension
; Values are 32-bit, widened by sign extension as NVIDIA's compiler does (cvt.s64.s32); sizes
; and counts by zero extension. Out-of-range dimensions give 0 for ids and offsets and 1 for
; sizes and counts (OpenCL 1.2, 6.12.1); libclc gives 0 for get_local_size and get_num_groups.
;
; Fences: mem_fence, read_mem_fence and write_mem_fence order memory for the whole device
; (membar.gl) whatever their flags. libclc uses membar.cta (work-group scope), as NVIDIA's own
; compiler does for mem_fence; the device allocator publishes data to other work-groups with
; these fences, so work-group scope is not enough.
;
;
; Generic-pointer casts (OpenCL C 2.0 to_global, to_local, to_private; LLVMSPIRVLib calls them
; __to_global etc. in its OpenCL 1.2 representation, and libclc has none): NULL unless the
; pointer points into that space (isspacep), as OpenCL C 2.0, 6.13.9 requires.
;
; Assembled with llvm-as-15 at build time and embedded into libcldm-ptx.so.
;
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-nvcl"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.envreg0()
declare i32 @llvm.nvvm.read.ptx.sreg.envreg1()
declare i32 @llvm.nvvm.read.ptx.sreg.envreg2()
declare i32 @llvm.nvvm.read.ptx.sreg.envreg3()
declare i32 @llvm.nvvm.read.ptx.sreg.envreg4()
declare i32 @llvm.nvvm.read.ptx.sreg.envreg5()
declare i32 @llvm.nvvm.read.ptx.sreg.envreg6()
declare i32 @llvm.nvvm.read.ptx.sreg.envreg7()
declare i32 @llvm.nvvm.read.ptx.sreg.envreg8()
declare i32 @llvm.nvvm.read.ptx.sreg.envreg9()
declare void @llvm.nvvm.membar.gl()
declare i1 @llvm.nvvm.isspacep.global(ptr)
declare i1 @llvm.nvvm.isspacep.shared(ptr)
declare i1 @llvm.nvvm.isspacep.local(ptr)

; size_t get_global_id(uint): tid + ntid * ctaid + envreg(3 + dim)
define i64 @_Z13get_global_idj(i32 %dim) #0 {
entry:
  switch i32 %dim, label %out [ i32 0, label %x  i32 1, label %y  i32 2, label %z ]
x:
  %tid.x = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ntid.x = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ctaid.x = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %off.x = call i32 @llvm.nvvm.read.ptx.sreg.envreg3()
  %tid64.x = sext i32 %tid.x to i64
  %off64.x = sext i32 %off.x to i64
  %ntid64.x = sext i32 %ntid.x to i64
  %ctaid64.x = sext i32 %ctaid.x to i64
  %base.x = mul nsw i64 %ntid64.x, %ctaid64.x
  %sum.x = add i64 %tid64.x, %off64.x
  %r.x = add i64 %sum.x, %base.x
  br label %out
y:
  %tid.y = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %ntid.y = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %ctaid.y = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %off.y = call i32 @llvm.nvvm.read.ptx.sreg.envreg4()
  %tid64.y = sext i32 %tid.y to i64
  %off64.y = sext i32 %off.y to i64
  %ntid64.y = sext i32 %ntid.y to i64
  %ctaid64.y = sext i32 %ctaid.y to i64
  %base.y = mul nsw i64 %ntid64.y, %ctaid64.y
  %sum.y = add i64 %tid64.y, %off64.y
  %r.y = add i64 %sum.y, %base.y
  br label %out
z:
  %tid.z = call i32 @llvm.nvvm.read.ptx.sreg.tid.z()
  %ntid.z = call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
  %ctaid.z = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
  %off.z = call i32 @llvm.nvvm.read.ptx.sreg.envreg5()
  %tid64.z = sext i32 %tid.z to i64
  %off64.z = sext i32 %off.z to i64
  %ntid64.z = sext i32 %ntid.z to i64
  %ctaid64.z = sext i32 %ctaid.z to i64
  %base.z = mul nsw i64 %ntid64.z, %ctaid64.z
  %sum.z = add i64 %tid64.z, %off64.z
  %r.z = add i64 %sum.z, %base.z
  br label %out
out:
  %r = phi i64 [ 0, %entry ], [ %r.x, %x ], [ %r.y, %y ], [ %r.z, %z ]
  ret i64 %r
}

; size_t get_global_offset(uint): envreg(3 + dim) - envreg(dim) * ntid
define i64 @_Z17get_global_offsetj(i32 %dim) #0 {
entry:
  switch i32 %dim, label %out [ i32 0, label %x  i32 1, label %y  i32 2, label %z ]
x:
  %ntid.x = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %grp.x = call i32 @llvm.nvvm.read.ptx.sreg.envreg0()
  %off.x = call i32 @llvm.nvvm.read.ptx.sreg.envreg3()
  %shift.x = mul i32 %grp.x, %ntid.x
  %o.x = sub i32 %off.x, %shift.x
  %r.x = sext i32 %o.x to i64
  br label %out
y:
  %ntid.y = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %grp.y = call i32 @llvm.nvvm.read.ptx.sreg.envreg1()
  %off.y = call i32 @llvm.nvvm.read.ptx.sreg.envreg4()
  %shift.y = mul i32 %grp.y, %ntid.y
  %o.y = sub i32 %off.y, %shift.y
  %r.y = sext i32 %o.y to i64
  br label %out
z:
  %ntid.z = call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
  %grp.z = call i32 @llvm.nvvm.read.ptx.sreg.envreg2()
  %off.z = call i32 @llvm.nvvm.read.ptx.sreg.envreg5()
  %shift.z = mul i32 %grp.z, %ntid.z
  %o.z = sub i32 %off.z, %shift.z
  %r.z = sext i32 %o.z to i64
  br label %out
out:
  %r = phi i64 [ 0, %entry ], [ %r.x, %x ], [ %r.y, %y ], [ %r.z, %z ]
  ret i64 %r
}

; size_t get_group_id(uint): ctaid + envreg(dim)
define i64 @_Z12get_group_idj(i32 %dim) #0 {
entry:
  switch i32 %dim, label %out [ i32 0, label %x  i32 1, label %y  i32 2, label %z ]
x:
  %ctaid.x = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %grp.x = call i32 @llvm.nvvm.read.ptx.sreg.envreg0()
  %g.x = add i32 %ctaid.x, %grp.x
  %r.x = sext i32 %g.x to i64
  br label %out
y:
  %ctaid.y = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %grp.y = call i32 @llvm.nvvm.read.ptx.sreg.envreg1()
  %g.y = add i32 %ctaid.y, %grp.y
  %r.y = sext i32 %g.y to i64
  br label %out
z:
  %ctaid.z = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
  %grp.z = call i32 @llvm.nvvm.read.ptx.sreg.envreg2()
  %g.z = add i32 %ctaid.z, %grp.z
  %r.z = sext i32 %g.z to i64
  br label %out
out:
  %r = phi i64 [ 0, %entry ], [ %r.x, %x ], [ %r.y, %y ], [ %r.z, %z ]
  ret i64 %r
}

; size_t get_num_groups(uint): envreg(6 + dim)
define i64 @_Z14get_num_groupsj(i32 %dim) #0 {
entry:
  switch i32 %dim, label %out [ i32 0, label %x  i32 1, label %y  i32 2, label %z ]
x:
  %n.x = call i32 @llvm.nvvm.read.ptx.sreg.envreg6()
  %r.x = zext i32 %n.x to i64
  br label %out
y:
  %n.y = call i32 @llvm.nvvm.read.ptx.sreg.envreg7()
  %r.y = zext i32 %n.y to i64
  br label %out
z:
  %n.z = call i32 @llvm.nvvm.read.ptx.sreg.envreg8()
  %r.z = zext i32 %n.z to i64
  br label %out
out:
  %r = phi i64 [ 1, %entry ], [ %r.x, %x ], [ %r.y, %y ], [ %r.z, %z ]
  ret i64 %r
}

; size_t get_global_size(uint): envreg(6 + dim) * ntid (uniform work-groups, OpenCL 1.2)
define i64 @_Z15get_global_sizej(i32 %dim) #0 {
entry:
  switch i32 %dim, label %out [ i32 0, label %x  i32 1, label %y  i32 2, label %z ]
x:
  %n.x = call i32 @llvm.nvvm.read.ptx.sreg.envreg6()
  %ntid.x = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %n64.x = zext i32 %n.x to i64
  %ntid64.x = zext i32 %ntid.x to i64
  %r.x = mul nuw i64 %n64.x, %ntid64.x
  br label %out
y:
  %n.y = call i32 @llvm.nvvm.read.ptx.sreg.envreg7()
  %ntid.y = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %n64.y = zext i32 %n.y to i64
  %ntid64.y = zext i32 %ntid.y to i64
  %r.y = mul nuw i64 %n64.y, %ntid64.y
  br label %out
z:
  %n.z = call i32 @llvm.nvvm.read.ptx.sreg.envreg8()
  %ntid.z = call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
  %n64.z = zext i32 %n.z to i64
  %ntid64.z = zext i32 %ntid.z to i64
  %r.z = mul nuw i64 %n64.z, %ntid64.z
  br label %out
out:
  %r = phi i64 [ 1, %entry ], [ %r.x, %x ], [ %r.y, %y ], [ %r.z, %z ]
  ret i64 %r
}

; size_t get_local_size(uint): ntid
define i64 @_Z14get_local_sizej(i32 %dim) #0 {
entry:
  switch i32 %dim, label %out [ i32 0, label %x  i32 1, label %y  i32 2, label %z ]
x:
  %ntid.x = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %r.x = zext i32 %ntid.x to i64
  br label %out
y:
  %ntid.y = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %r.y = zext i32 %ntid.y to i64
  br label %out
z:
  %ntid.z = call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
  %r.z = zext i32 %ntid.z to i64
  br label %out
out:
  %r = phi i64 [ 1, %entry ], [ %r.x, %x ], [ %r.y, %y ], [ %r.z, %z ]
  ret i64 %r
}

; size_t get_local_id(uint): tid
define i64 @_Z12get_local_idj(i32 %dim) #0 {
entry:
  switch i32 %dim, label %out [ i32 0, label %x  i32 1, label %y  i32 2, label %z ]
x:
  %tid.x = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %r.x = zext i32 %tid.x to i64
  br label %out
y:
  %tid.y = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %r.y = zext i32 %tid.y to i64
  br label %out
z:
  %tid.z = call i32 @llvm.nvvm.read.ptx.sreg.tid.z()
  %r.z = zext i32 %tid.z to i64
  br label %out
out:
  %r = phi i64 [ 0, %entry ], [ %r.x, %x ], [ %r.y, %y ], [ %r.z, %z ]
  ret i64 %r
}

; uint get_work_dim(void): envreg9
define i32 @_Z12get_work_dimv() #0 {
entry:
  %d = call i32 @llvm.nvvm.read.ptx.sreg.envreg9()
  ret i32 %d
}

; void mem_fence(cl_mem_fence_flags): membar.gl
define void @_Z9mem_fencej(i32 %flags) #1 {
entry:
  call void @llvm.nvvm.membar.gl()
  ret void
}

; void read_mem_fence(cl_mem_fence_flags): membar.gl
define void @_Z14read_mem_fencej(i32 %flags) #1 {
entry:
  call void @llvm.nvvm.membar.gl()
  ret void
}

; void write_mem_fence(cl_mem_fence_flags): membar.gl
define void @_Z15write_mem_fencej(i32 %flags) #1 {
entry:
  call void @llvm.nvvm.membar.gl()
  ret void
}

; 64-bit atom_add / atom_xchg / atom_cmpxchg on global memory (cl_khr_int64_base_atomics),
; which libclc-15's NVPTX library lacks: relaxed atom.global.add.u64 / .exch.b64 / .cas.b64
; (OpenCL 1.2 atomics order nothing; the allocator orders them with mem_fence). Signed and
; unsigned manglings.
define i64 @_Z8atom_addPU3AS1Vll(ptr addrspace(1) %p, i64 %v) #1 {
entry:
  %r = atomicrmw add ptr addrspace(1) %p, i64 %v monotonic, align 8
  ret i64 %r
}

define i64 @_Z8atom_addPU3AS1Vmm(ptr addrspace(1) %p, i64 %v) #1 {
entry:
  %r = atomicrmw add ptr addrspace(1) %p, i64 %v monotonic, align 8
  ret i64 %r
}

define i64 @_Z9atom_xchgPU3AS1Vll(ptr addrspace(1) %p, i64 %v) #1 {
entry:
  %r = atomicrmw xchg ptr addrspace(1) %p, i64 %v monotonic, align 8
  ret i64 %r
}

define i64 @_Z9atom_xchgPU3AS1Vmm(ptr addrspace(1) %p, i64 %v) #1 {
entry:
  %r = atomicrmw xchg ptr addrspace(1) %p, i64 %v monotonic, align 8
  ret i64 %r
}

define i64 @_Z12atom_cmpxchgPU3AS1Vlll(ptr addrspace(1) %p, i64 %c, i64 %v) #1 {
entry:
  %r = cmpxchg ptr addrspace(1) %p, i64 %c, i64 %v monotonic monotonic, align 8
  %o = extractvalue { i64, i1 } %r, 0
  ret i64 %o
}

define i64 @_Z12atom_cmpxchgPU3AS1Vmmm(ptr addrspace(1) %p, i64 %c, i64 %v) #1 {
entry:
  %r = cmpxchg ptr addrspace(1) %p, i64 %c, i64 %v monotonic monotonic, align 8
  %o = extractvalue { i64, i1 } %r, 0
  ret i64 %o
}

; global void *to_global(void *)
define ptr addrspace(1) @__to_global(ptr %p) #0 {
entry:
  %in = call i1 @llvm.nvvm.isspacep.global(ptr %p)
  %c = addrspacecast ptr %p to ptr addrspace(1)
  %r = select i1 %in, ptr addrspace(1) %c, ptr addrspace(1) null
  ret ptr addrspace(1) %r
}

; local void *to_local(void *)
define ptr addrspace(3) @__to_local(ptr %p) #0 {
entry:
  %in = call i1 @llvm.nvvm.isspacep.shared(ptr %p)
  %c = addrspacecast ptr %p to ptr addrspace(3)
  %r = select i1 %in, ptr addrspace(3) %c, ptr addrspace(3) null
  ret ptr addrspace(3) %r
}

; private void *to_private(void *): private pointers are generic ones on NVPTX
define ptr @__to_private(ptr %p) #0 {
entry:
  %in = call i1 @llvm.nvvm.isspacep.local(ptr %p)
  %r = select i1 %in, ptr %p, ptr null
  ret ptr %r
}

attributes #0 = { nounwind readnone willreturn }
attributes #1 = { nounwind }
