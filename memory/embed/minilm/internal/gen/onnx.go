package main

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The few fields of ONNX's protobuf schema (onnx/onnx.proto3) that a
// graph's weights and its MatMul nodes need. Reading them with protowire
// spares the generator the ONNX runtime and the schema's generated code.
const (
	modelGraph       = 7 // ModelProto.graph
	graphNode        = 1 // GraphProto.node
	graphInitializer = 5 // GraphProto.initializer
	nodeInput        = 1 // NodeProto.input
	nodeName         = 3 // NodeProto.name
	nodeOpType       = 4 // NodeProto.op_type
	tensorDims       = 1 // TensorProto.dims
	tensorDataType   = 2 // TensorProto.data_type
	tensorFloatData  = 4 // TensorProto.float_data
	tensorName       = 8 // TensorProto.name
	tensorRawData    = 9 // TensorProto.raw_data
	typeFloat        = 1 // TensorProto.DataType.FLOAT
)

// onnxTensor is a float32 initializer.
type onnxTensor struct {
	dims []int
	data []float32
}

// onnxGraph is what gen needs of a model: its float32 initializers by
// name, and for each MatMul node the name of the weight it multiplies by.
type onnxGraph struct {
	tensors map[string]onnxTensor
	matmul  map[string]string // node name -> initializer name
}

func readONNX(b []byte) (*onnxGraph, error) {
	g := &onnxGraph{tensors: map[string]onnxTensor{}, matmul: map[string]string{}}
	graph, err := field(b, modelGraph)
	if err != nil || graph == nil {
		return nil, fmt.Errorf("onnx: no graph: %v", err)
	}
	var nodes [][]byte
	err = eachField(graph, func(num protowire.Number, v []byte) error {
		switch num {
		case graphInitializer:
			name, t, err := readTensor(v)
			if err != nil {
				return err
			}
			if t.data != nil {
				g.tensors[name] = t
			}
		case graphNode:
			nodes = append(nodes, v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		var name, op string
		var inputs []string
		eachField(n, func(num protowire.Number, v []byte) error {
			switch num {
			case nodeName:
				name = string(v)
			case nodeOpType:
				op = string(v)
			case nodeInput:
				inputs = append(inputs, string(v))
			}
			return nil
		})
		if op != "MatMul" {
			continue
		}
		for _, in := range inputs {
			if _, ok := g.tensors[in]; ok {
				g.matmul[name] = in
			}
		}
	}
	return g, nil
}

func readTensor(b []byte) (string, onnxTensor, error) {
	var name string
	var t onnxTensor
	var typ uint64
	var raw, floats []byte
	err := eachFieldWire(b, func(num protowire.Number, wt protowire.Type, v []byte, x uint64) error {
		switch {
		case num == tensorName:
			name = string(v)
		case num == tensorDataType:
			typ = x
		case num == tensorDims && wt == protowire.VarintType:
			t.dims = append(t.dims, int(x))
		case num == tensorDims: // packed
			for len(v) > 0 {
				d, n := protowire.ConsumeVarint(v)
				if n < 0 {
					return protowire.ParseError(n)
				}
				t.dims = append(t.dims, int(d))
				v = v[n:]
			}
		case num == tensorRawData:
			raw = v
		case num == tensorFloatData:
			floats = append(floats, v...)
		}
		return nil
	})
	if err != nil || typ != typeFloat {
		return name, onnxTensor{}, err
	}
	if raw == nil {
		raw = floats
	}
	t.data = make([]float32, len(raw)/4)
	for i := range t.data {
		t.data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	n := 1
	for _, d := range t.dims {
		n *= d
	}
	if n != len(t.data) {
		return name, t, fmt.Errorf("onnx: %s has dims %v but %d values", name, t.dims, len(t.data))
	}
	return name, t, nil
}

// field returns the last length-delimited field num of message b.
func field(b []byte, num protowire.Number) ([]byte, error) {
	var out []byte
	err := eachField(b, func(n protowire.Number, v []byte) error {
		if n == num {
			out = v
		}
		return nil
	})
	return out, err
}

func eachField(b []byte, f func(protowire.Number, []byte) error) error {
	return eachFieldWire(b, func(n protowire.Number, wt protowire.Type, v []byte, _ uint64) error {
		if wt == protowire.BytesType {
			return f(n, v)
		}
		return nil
	})
}

// eachFieldWire calls f with each field of b: v for length-delimited
// fields, x for varints.
func eachFieldWire(b []byte, f func(protowire.Number, protowire.Type, []byte, uint64) error) error {
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch wt {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		default:
			n = protowire.ConsumeFieldValue(num, wt, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := f(num, wt, v, x); err != nil {
			return err
		}
	}
	return nil
}
