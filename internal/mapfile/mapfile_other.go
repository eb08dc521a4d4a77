//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package mapfile

import (
	"fmt"
	"os"
)

// Map reads the whole file where mapping it is not supported. An empty
// file is an error, as a mapping of one is.
func Map(path string) (data []byte, unmap func(), err error) {
	data, err = os.ReadFile(path)
	if err == nil && len(data) == 0 {
		err = fmt.Errorf("map %s: size 0", path)
	}
	if err != nil {
		return nil, nil, err
	}
	return data, func() {}, nil
}
