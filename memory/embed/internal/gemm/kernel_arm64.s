#include "textflag.h"

// The Go assembler has no mnemonics for these NEON forms, so they are
// encoded by hand; each macro names the instruction it stands for.

// SXTL Vd.8H, Vn.8B (SSHLL #0): the low eight int8s to int16.
#define SXTL_8H(n, d) WORD $(0x0F08A400 | (n)<<5 | (d))
// SXTL2 Vd.8H, Vn.16B: the high eight.
#define SXTL2_8H(n, d) WORD $(0x4F08A400 | (n)<<5 | (d))
// SXTL Vd.4S, Vn.4H: the low four int16s to int32.
#define SXTL_4S(n, d) WORD $(0x0F10A400 | (n)<<5 | (d))
// SXTL2 Vd.4S, Vn.8H: the high four.
#define SXTL2_4S(n, d) WORD $(0x4F10A400 | (n)<<5 | (d))
// SCVTF Vd.4S, Vn.4S.
#define SCVTF_4S(n, d) WORD $(0x4E21D800 | (n)<<5 | (d))
// FMLA Vd.4S, Vn.4S, Vm.S[lane]: lane is H:L, Vm may be any of V0–V31.
#define FMLA_LANE(m, lane, n, d) WORD $(0x4F801000 | ((lane)&1)<<21 | ((lane)>>1)<<11 | (m)<<16 | (n)<<5 | (d))

// WIDEN turns the sixteen int8s of Vsrc into float32s in V24–V27 (columns
// 0–3, 4–7, 8–11, 12–15), through int16s in V28 and V29.
#define WIDEN(src) \
	SXTL_8H(src, 28) \
	SXTL2_8H(src, 29) \
	SXTL_4S(28, 24)   \
	SXTL2_4S(28, 25)  \
	SXTL_4S(29, 26)   \
	SXTL2_4S(29, 27)  \
	SCVTF_4S(24, 24)  \
	SCVTF_4S(25, 25)  \
	SCVTF_4S(26, 26)  \
	SCVTF_4S(27, 27)

// ROWS adds lane `lane` of x's V20–V23 (rows 0–3), times the widened
// weight row in V24–V27, into the tile: row i, columns 4q–4q+3 is V(4i+q).
#define ROWS(lane) \
	FMLA_LANE(20, lane, 24, 0)  \
	FMLA_LANE(20, lane, 25, 1)  \
	FMLA_LANE(20, lane, 26, 2)  \
	FMLA_LANE(20, lane, 27, 3)  \
	FMLA_LANE(21, lane, 24, 4)  \
	FMLA_LANE(21, lane, 25, 5)  \
	FMLA_LANE(21, lane, 26, 6)  \
	FMLA_LANE(21, lane, 27, 7)  \
	FMLA_LANE(22, lane, 24, 8)  \
	FMLA_LANE(22, lane, 25, 9)  \
	FMLA_LANE(22, lane, 26, 10) \
	FMLA_LANE(22, lane, 27, 11) \
	FMLA_LANE(23, lane, 24, 12) \
	FMLA_LANE(23, lane, 25, 13) \
	FMLA_LANE(23, lane, 26, 14) \
	FMLA_LANE(23, lane, 27, 15)

// OUT stores one row of the tile, accumulators a0–a3, as bias + acc·scale
// with a single rounding: the Go compiler fuses kernelGo's acc*scale+bias
// on arm64 too, so the two kernels agree to the bit.
#define OUT(a0, a1, a2, a3) \
	VORR V20.B16, V20.B16, V24.B16 \
	VORR V21.B16, V21.B16, V25.B16 \
	VORR V22.B16, V22.B16, V26.B16 \
	VORR V23.B16, V23.B16, V27.B16 \
	VFMLA V16.S4, a0.S4, V24.S4    \
	VFMLA V17.S4, a1.S4, V25.S4    \
	VFMLA V18.S4, a2.S4, V26.S4    \
	VFMLA V19.S4, a3.S4, V27.S4    \
	VST1 [V24.S4, V25.S4, V26.S4, V27.S4], (R6) \
	ADD R7, R6

// func kernel4x16NEON(k int, x *float32, ldx int, panel *int8, scale, bias, y *float32, ldy int)
TEXT ·kernel4x16NEON(SB), NOSPLIT, $0-64
	MOVD k+0(FP), R0
	MOVD x+8(FP), R1
	MOVD ldx+16(FP), R5
	LSL  $2, R5
	ADD  R5, R1, R2
	ADD  R5, R2, R3
	ADD  R5, R3, R4
	MOVD panel+24(FP), R6
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	VEOR V6.B16, V6.B16, V6.B16
	VEOR V7.B16, V7.B16, V7.B16
	VEOR V8.B16, V8.B16, V8.B16
	VEOR V9.B16, V9.B16, V9.B16
	VEOR V10.B16, V10.B16, V10.B16
	VEOR V11.B16, V11.B16, V11.B16
	VEOR V12.B16, V12.B16, V12.B16
	VEOR V13.B16, V13.B16, V13.B16
	VEOR V14.B16, V14.B16, V14.B16
	VEOR V15.B16, V15.B16, V15.B16

	// Four weight rows a pass: one load brings four consecutive x of each
	// activation row, used lane by lane, so x costs a load per four r
	// instead of a broadcast per r. Each accumulator still takes r in
	// order, the sums kernelGo makes.
	LSR  $2, R0, R8
	AND  $3, R0, R9
	CBZ  R8, tail

quad:
	VLD1.P 64(R6), [V16.B16, V17.B16, V18.B16, V19.B16]
	VLD1.P 16(R1), [V20.S4]
	VLD1.P 16(R2), [V21.S4]
	VLD1.P 16(R3), [V22.S4]
	VLD1.P 16(R4), [V23.S4]
	WIDEN(16)
	ROWS(0)
	WIDEN(17)
	ROWS(1)
	WIDEN(18)
	ROWS(2)
	WIDEN(19)
	ROWS(3)
	SUBS $1, R8
	BNE  quad

tail:
	CBZ R9, done

one:
	VLD1.P 16(R6), [V16.B16]
	FMOVS.P 4(R1), F20
	FMOVS.P 4(R2), F21
	FMOVS.P 4(R3), F22
	FMOVS.P 4(R4), F23
	WIDEN(16)
	ROWS(0)
	SUBS $1, R9
	BNE  one

done:
	MOVD scale+32(FP), R1
	MOVD bias+40(FP), R2
	MOVD y+48(FP), R6
	MOVD ldy+56(FP), R7
	LSL  $2, R7
	VLD1 (R1), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1 (R2), [V20.S4, V21.S4, V22.S4, V23.S4]
	OUT(V0, V1, V2, V3)
	OUT(V4, V5, V6, V7)
	OUT(V8, V9, V10, V11)
	OUT(V12, V13, V14, V15)
	RET
