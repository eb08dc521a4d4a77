#include "textflag.h"

// BCAST sets all eight floats of reg to the float32 whose bits are bits.
#define BCAST(bits, reg, xreg) \
	MOVL bits, AX; \
	MOVQ AX, xreg; \
	VBROADCASTSS xreg, reg

// func geluAVX2(x *float32, n int)
//
// gelu1 eight values at a time, in the same steps: |v|/√2, the
// polynomial by Horner's rule, four squarings, ½(1 - 1/p) given v's sign,
// then v·(½ + that).
TEXT ·geluAVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $3, CX
	BCAST($0x3f3504f3, Y5, X5)   // 1/√2
	BCAST($0x3d906e67, Y6, X6)   // a1
	BCAST($0x3d2d2fe7, Y7, X7)   // a2
	BCAST($0x3c17e369, Y8, X8)   // a3
	BCAST($0x391f6607, Y9, X9)   // a4
	BCAST($0x39910039, Y10, X10) // a5
	BCAST($0x38349f67, Y11, X11) // a6
	BCAST($0x3f800000, Y12, X12) // 1
	BCAST($0x3f000000, Y13, X13) // ½
	BCAST($0x80000000, Y14, X14) // the sign bit

loop:
	VMOVUPS (SI), Y0
	VMULPS  Y5, Y0, Y1
	VANDNPS Y1, Y14, Y1        // |v/√2|
	VMOVAPS Y11, Y2
	VFMADD213PS Y10, Y1, Y2    // p = p·z + a5
	VFMADD213PS Y9, Y1, Y2
	VFMADD213PS Y8, Y1, Y2
	VFMADD213PS Y7, Y1, Y2
	VFMADD213PS Y6, Y1, Y2
	VFMADD213PS Y12, Y1, Y2    // 1 + z·(a1 + …)
	VMULPS  Y2, Y2, Y2
	VMULPS  Y2, Y2, Y2
	VMULPS  Y2, Y2, Y2
	VMULPS  Y2, Y2, Y2
	VDIVPS  Y2, Y12, Y3        // 1/p
	VSUBPS  Y3, Y12, Y3        // 1 - 1/p
	VMULPS  Y13, Y3, Y3
	VANDPS  Y14, Y0, Y4
	VXORPS  Y4, Y3, Y3         // with v's sign
	VADDPS  Y13, Y3, Y3
	VMULPS  Y3, Y0, Y0
	VMOVUPS Y0, (SI)
	ADDQ $32, SI
	DECQ CX
	JNZ  loop
	VZEROUPPER
	RET
