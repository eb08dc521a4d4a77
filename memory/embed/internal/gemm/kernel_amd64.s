#include "textflag.h"

// func kernel4x16AVX2(k int, x *float32, ldx int, panel *int8, scale, bias, y *float32, ldy int)
TEXT ·kernel4x16AVX2(SB), NOSPLIT, $0-64
	MOVQ k+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ ldx+16(FP), R8
	SHLQ $2, R8
	MOVQ panel+24(FP), DI
	LEAQ (SI)(R8*1), R9
	LEAQ (R9)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

loop:
	VPMOVSXBD (DI), Y8
	VPMOVSXBD 8(DI), Y9
	VCVTDQ2PS Y8, Y8
	VCVTDQ2PS Y9, Y9
	VBROADCASTSS (SI), Y10
	VBROADCASTSS (R9), Y11
	VFMADD231PS Y8, Y10, Y0
	VFMADD231PS Y9, Y10, Y1
	VFMADD231PS Y8, Y11, Y2
	VFMADD231PS Y9, Y11, Y3
	VBROADCASTSS (R10), Y12
	VBROADCASTSS (R11), Y13
	VFMADD231PS Y8, Y12, Y4
	VFMADD231PS Y9, Y12, Y5
	VFMADD231PS Y8, Y13, Y6
	VFMADD231PS Y9, Y13, Y7
	ADDQ $16, DI
	ADDQ $4, SI
	ADDQ $4, R9
	ADDQ $4, R10
	ADDQ $4, R11
	DECQ CX
	JNZ  loop

	MOVQ scale+32(FP), AX
	MOVQ bias+40(FP), BX
	VMOVUPS (AX), Y12
	VMOVUPS 32(AX), Y13
	VMOVUPS (BX), Y14
	VMOVUPS 32(BX), Y15
	VFMADD213PS Y14, Y12, Y0
	VFMADD213PS Y15, Y13, Y1
	VFMADD213PS Y14, Y12, Y2
	VFMADD213PS Y15, Y13, Y3
	VFMADD213PS Y14, Y12, Y4
	VFMADD213PS Y15, Y13, Y5
	VFMADD213PS Y14, Y12, Y6
	VFMADD213PS Y15, Y13, Y7

	MOVQ y+48(FP), DX
	MOVQ ldy+56(FP), R12
	SHLQ $2, R12
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ R12, DX
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ R12, DX
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ R12, DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	VZEROUPPER
	RET

// The AVX-512 kernels hold one accumulator per row, sixteen floats wide,
// so a weight row is widened from int8 once for up to twelve rows and each
// activation is broadcast straight from memory into its multiply-add. The
// sums run in the same order, fused, as the AVX2 kernel's, so the two give
// the same bits.

// ROWS4 multiplies the widened weights in Z16 by the activations of the
// four rows at base, base+ldx, base+2·ldx and base+3·ldx (R8 = ldx bytes,
// R11 = 3·ldx bytes) into four accumulators.
#define ROWS4(base, a0, a1, a2, a3) \
	VFMADD231PS.BCST (base), Z16, a0; \
	VFMADD231PS.BCST (base)(R8*1), Z16, a1; \
	VFMADD231PS.BCST (base)(R8*2), Z16, a2; \
	VFMADD231PS.BCST (base)(R11*1), Z16, a3

#define WIDEN \
	VPMOVSXBD (DI), Z16; \
	VCVTDQ2PS Z16, Z16

// STORE4 scales four accumulators by Z17, adds the bias in Z18 and stores
// them to the rows at DX, DX+ldy, … (R12 = ldy bytes), leaving DX past them.
#define STORE4(a0, a1, a2, a3) \
	VFMADD213PS Z18, Z17, a0; \
	VFMADD213PS Z18, Z17, a1; \
	VFMADD213PS Z18, Z17, a2; \
	VFMADD213PS Z18, Z17, a3; \
	VMOVUPS a0, (DX); \
	ADDQ R12, DX; \
	VMOVUPS a1, (DX); \
	ADDQ R12, DX; \
	VMOVUPS a2, (DX); \
	ADDQ R12, DX; \
	VMOVUPS a3, (DX); \
	ADDQ R12, DX

// func kernelAVX512(k, rows int, x *float32, ldx int, panel *int8, scale, bias, y *float32, ldy int)
TEXT ·kernelAVX512(SB), NOSPLIT, $0-72
	MOVQ k+0(FP), CX
	MOVQ rows+8(FP), BX
	MOVQ x+16(FP), SI
	MOVQ ldx+24(FP), R8
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R11
	LEAQ (SI)(R8*4), R9
	LEAQ (R9)(R8*4), R10
	MOVQ panel+32(FP), DI
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	CMPQ BX, $12
	JEQ  loop12
	CMPQ BX, $8
	JEQ  loop8

loop4:
	WIDEN
	ROWS4(SI, Z0, Z1, Z2, Z3)
	ADDQ $16, DI
	ADDQ $4, SI
	DECQ CX
	JNZ  loop4
	JMP  store

loop8:
	WIDEN
	ROWS4(SI, Z0, Z1, Z2, Z3)
	ROWS4(R9, Z4, Z5, Z6, Z7)
	ADDQ $16, DI
	ADDQ $4, SI
	ADDQ $4, R9
	DECQ CX
	JNZ  loop8
	JMP  store

loop12:
	WIDEN
	ROWS4(SI, Z0, Z1, Z2, Z3)
	ROWS4(R9, Z4, Z5, Z6, Z7)
	ROWS4(R10, Z8, Z9, Z10, Z11)
	ADDQ $16, DI
	ADDQ $4, SI
	ADDQ $4, R9
	ADDQ $4, R10
	DECQ CX
	JNZ  loop12

store:
	MOVQ scale+40(FP), AX
	MOVQ bias+48(FP), R13
	VMOVUPS (AX), Z17
	VMOVUPS (R13), Z18
	MOVQ y+56(FP), DX
	MOVQ ldy+64(FP), R12
	SHLQ $2, R12
	STORE4(Z0, Z1, Z2, Z3)
	CMPQ BX, $4
	JEQ  done
	STORE4(Z4, Z5, Z6, Z7)
	CMPQ BX, $8
	JEQ  done
	STORE4(Z8, Z9, Z10, Z11)

done:
	VZEROUPPER
	RET
