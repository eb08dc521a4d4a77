package bert

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"unsafe"
)

// The file is a magic line, a little-endian uint32 length, a JSON header
// of that length, and then the tensors, each starting at a multiple of
// align from the start of the file. The header carries Config and, for
// each tensor, its name, element type and length, so a reader refuses a
// file that does not hold exactly the model this code runs.

const (
	magic = "acolyte-bert-1\n"
	align = 64
)

type header struct {
	Config  Config        `json:"config"`
	Tensors []tensorEntry `json:"tensors"`
}

type tensorEntry struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Offset int    `json:"offset"`
	Len    int    `json:"len"`
}

// tensor is one array of the model, named as in the file. Exactly one of
// its pointers is set.
type tensor struct {
	name string
	n    int // elements
	f32  *[]float32
	i8   *[]int8
	u32  *[]uint32
	u16  *[]uint16
	u8   *string
}

func (t tensor) typ() string {
	switch {
	case t.f32 != nil:
		return "f32"
	case t.i8 != nil:
		return "i8"
	case t.u32 != nil:
		return "u32"
	case t.u16 != nil:
		return "u16"
	}
	return "u8"
}

func (t tensor) size() int {
	switch t.typ() {
	case "f32", "u32":
		return 4 * t.n
	case "u16":
		return 2 * t.n
	}
	return t.n
}

// tensors lists every array of m in file order, with the length Config
// implies for it, so writing and reading share one description.
func (m *Model) tensors() []tensor {
	c := m.Config
	h, v := c.Hidden, c.Vocab
	ts := []tensor{
		{name: "vocab.tokens", n: c.VocabBytes, u8: &m.vocab.tokens},
		{name: "vocab.offsets", n: v + 1, u32: &m.vocab.offsets},
		{name: "vocab.sorted", n: v, u16: &m.vocab.sorted},
		{name: "embeddings.words", n: v * h, i8: &m.Words},
		{name: "embeddings.words.scale", n: v, f32: &m.WordScale},
		{name: "embeddings.positions", n: c.MaxTokens * h, f32: &m.Positions},
		{name: "embeddings.norm.gain", n: h, f32: &m.Norm.Gain},
		{name: "embeddings.norm.bias", n: h, f32: &m.Norm.Bias},
	}
	for i := range m.Layers {
		l := &m.Layers[i]
		p := fmt.Sprintf("layer.%d.", i)
		ts = append(ts, linear(p+"qkv", &l.QKV, h, 3*h)...)
		ts = append(ts, linear(p+"out", &l.Out, h, h)...)
		ts = append(ts, norm(p+"norm1", &l.Norm1, h)...)
		ts = append(ts, linear(p+"up", &l.Up, h, c.Intermediate)...)
		ts = append(ts, linear(p+"down", &l.Down, c.Intermediate, h)...)
		ts = append(ts, norm(p+"norm2", &l.Norm2, h)...)
	}
	return ts
}

func linear(name string, l *Linear, k, n int) []tensor {
	l.W.K, l.W.N = k, n
	return []tensor{
		{name: name + ".weight", n: k * n, i8: &l.W.Data},
		{name: name + ".scale", n: n, f32: &l.W.Scale},
		{name: name + ".bias", n: n, f32: &l.Bias},
	}
}

func norm(name string, l *LayerNorm, n int) []tensor {
	return []tensor{
		{name: name + ".gain", n: n, f32: &l.Gain},
		{name: name + ".bias", n: n, f32: &l.Bias},
	}
}

// Write writes m in the file format.
func (m *Model) Write(w io.Writer) error {
	m.Layers = m.Layers[:m.Config.Layers]
	ts := m.tensors()
	hd := header{Config: m.Config}
	// The header's length depends on the offsets written into it, so
	// offsets are counted from the end of a header given room to spare.
	base := 0
	for range 2 {
		hd.Tensors = hd.Tensors[:0]
		off := base
		for _, t := range ts {
			off = (off + align - 1) / align * align
			hd.Tensors = append(hd.Tensors, tensorEntry{Name: t.name, Type: t.typ(), Offset: off, Len: t.n})
			off += t.size()
		}
		js, err := json.Marshal(hd)
		if err != nil {
			return err
		}
		base = (len(magic) + 4 + len(js) + 1024 + align - 1) / align * align
	}
	js, _ := json.Marshal(hd)
	var buf bytes.Buffer
	buf.WriteString(magic)
	binary.Write(&buf, binary.LittleEndian, uint32(len(js)))
	buf.Write(js)
	for i, t := range ts {
		if len := tensorLen(t); len != t.n {
			return fmt.Errorf("bert: %s holds %d values, want %d", t.name, len, t.n)
		}
		buf.Write(make([]byte, hd.Tensors[i].Offset-buf.Len()))
		switch {
		case t.f32 != nil:
			binary.Write(&buf, binary.LittleEndian, *t.f32)
		case t.i8 != nil:
			binary.Write(&buf, binary.LittleEndian, *t.i8)
		case t.u32 != nil:
			binary.Write(&buf, binary.LittleEndian, *t.u32)
		case t.u16 != nil:
			binary.Write(&buf, binary.LittleEndian, *t.u16)
		default:
			buf.WriteString(*t.u8)
		}
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func tensorLen(t tensor) int {
	switch {
	case t.f32 != nil:
		return len(*t.f32)
	case t.i8 != nil:
		return len(*t.i8)
	case t.u32 != nil:
		return len(*t.u32)
	case t.u16 != nil:
		return len(*t.u16)
	}
	return len(*t.u8)
}

// Open reads a model from data, which must stay unchanged for the
// model's life: the int8 weights, nearly all of it, are used in place, as
// are the other arrays where the machine is little-endian and they are
// aligned.
func Open(data string) (*Model, error) {
	if len(data) < len(magic)+4 || data[:len(magic)] != magic {
		return nil, errors.New("bert: not a model file")
	}
	n := int(binary.LittleEndian.Uint32([]byte(data[len(magic) : len(magic)+4])))
	if len(magic)+4+n > len(data) {
		return nil, errors.New("bert: header runs past the end of the file")
	}
	var hd header
	if err := json.Unmarshal([]byte(data[len(magic)+4:len(magic)+4+n]), &hd); err != nil {
		return nil, fmt.Errorf("bert: header: %w", err)
	}
	if err := hd.Config.check(); err != nil {
		return nil, err
	}
	m := &Model{Config: hd.Config, Layers: make([]Layer, hd.Config.Layers)}
	ts := m.tensors()
	if len(ts) != len(hd.Tensors) {
		return nil, fmt.Errorf("bert: file holds %d tensors, the model %d", len(hd.Tensors), len(ts))
	}
	for i, t := range ts {
		e := hd.Tensors[i]
		if e.Name != t.name || e.Type != t.typ() || e.Len != t.n {
			return nil, fmt.Errorf("bert: tensor %d is %s %s[%d], want %s %s[%d]", i, e.Name, e.Type, e.Len, t.name, t.typ(), t.n)
		}
		if e.Offset < 0 || e.Offset+t.size() > len(data) {
			return nil, fmt.Errorf("bert: %s runs past the end of the file", t.name)
		}
		load(t, data[e.Offset:e.Offset+t.size()])
	}
	return m, m.check()
}

// load points t at b, or decodes a copy of b where it cannot be used in
// place.
func load(t tensor, b string) {
	p := unsafe.Pointer(unsafe.StringData(b))
	inPlace := func(size uintptr) bool { return littleEndian() && uintptr(p)%size == 0 }
	switch {
	case t.i8 != nil:
		*t.i8 = unsafe.Slice((*int8)(p), t.n)
	case t.u8 != nil:
		*t.u8 = b
	case t.f32 != nil && inPlace(4):
		*t.f32 = unsafe.Slice((*float32)(p), t.n)
	case t.f32 != nil:
		raw := []byte(b)
		*t.f32 = make([]float32, t.n)
		for i := range *t.f32 {
			(*t.f32)[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case t.u32 != nil && inPlace(4):
		*t.u32 = unsafe.Slice((*uint32)(p), t.n)
	case t.u32 != nil:
		raw := []byte(b)
		*t.u32 = make([]uint32, t.n)
		for i := range *t.u32 {
			(*t.u32)[i] = binary.LittleEndian.Uint32(raw[4*i:])
		}
	case t.u16 != nil && inPlace(2):
		*t.u16 = unsafe.Slice((*uint16)(p), t.n)
	case t.u16 != nil:
		raw := []byte(b)
		*t.u16 = make([]uint16, t.n)
		for i := range *t.u16 {
			(*t.u16)[i] = binary.LittleEndian.Uint16(raw[2*i:])
		}
	}
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}
