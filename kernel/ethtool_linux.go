package kernel

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cxray/cxray/internal/linuxabi"
)

// ethtoolIoctl performs SIOCETHTOOL on ifname through a datagram socket
// (what ethtool(8) does): the ifreq names the interface and points at buf.
func ethtoolIoctl(ifname string, buf []byte) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
	}
	defer unix.Close(fd)
	// struct ifreq: the name, then a union whose ifr_data is a pointer.
	var ifr struct {
		name [linuxabi.IFNAMSIZ]byte
		data unsafe.Pointer
		_    [24 - unsafe.Sizeof(uintptr(0))]byte
	}
	copy(ifr.name[:], ifname)
	ifr.data = unsafe.Pointer(&buf[0])
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(linuxabi.SIOCETHTOOL), uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(buf)
	if errno != 0 {
		return errno
	}
	return nil
}
