package pcielink_test

import (
	"testing"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/adapter/adaptertest"
)

func kernelAdapter(t *testing.T) *adapter.Adapter {
	t.Helper()
	return adaptertest.Kernel(t, "kernel:mlx5_0", nil)
}
