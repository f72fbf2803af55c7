package fwctl

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// OpenDevice opens a fwctl character device and checks with FWCTL_INFO
// that an mlx5 driver is behind it.
func OpenDevice(path string) (*Device, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, openError(path, err)
	}
	d := &Device{f: f, path: path}
	info, err := d.query()
	if err != nil {
		f.Close()
		return nil, err
	}
	if info.DeviceType != DeviceTypeMLX5 {
		f.Close()
		return nil, &Error{Op: "open", Kind: ErrNotMLX5, Detail: fmt.Sprintf("%s belongs to device type %d, not mlx5 (%d)", path, info.DeviceType, DeviceTypeMLX5),
			Hint: "pick the fwctl node of the ConnectX function (cxray finds it from the PCI address)"}
	}
	d.info = info
	return d, nil
}

func ioctl(fd, req uintptr, arg unsafe.Pointer) syscall.Errno {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, fd, req, uintptr(arg))
	return e
}
