package dev

import (
	"context"
	"errors"
	"strings"
	"testing"
)

type accessorFunc func(ctx context.Context, m Method, id uint16, data []byte) ([]byte, error)

func (f accessorFunc) Access(ctx context.Context, m Method, id uint16, data []byte) ([]byte, error) {
	return f(ctx, m, id, data)
}

// A read-only device passes reads and refuses writes before they reach
// the backend.
func TestReadOnly(t *testing.T) {
	var got []Method
	acc := ReadOnly(accessorFunc(func(ctx context.Context, m Method, id uint16, data []byte) ([]byte, error) {
		got = append(got, m)
		return data, nil
	}))
	if _, err := acc.Access(context.Background(), Get, 0x9020, make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	_, err := acc.Access(context.Background(), Set, 0x5006, make([]byte, 4))
	var we *WriteRefusedError
	if !errors.As(err, &we) || we.ID != 0x5006 || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("set: %v", err)
	}
	if len(got) != 1 || got[0] != Get {
		t.Errorf("passed through: %v", got)
	}
}
