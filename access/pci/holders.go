package pci

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// initPIDNS is the inode of the initial PID namespace, a constant of the
// Linux kernel (PROC_PID_INIT_INO).
const initPIDNS = "pid:[4026531836]"

// DeadPIDHolder decides whether v, found in the ICMD semaphore of the
// function bdf (which holds the process ID of its holder, by mstflint's
// convention and cxray's), was left there by a process that is gone. It
// answers true only when all of these hold, and says why:
//
//   - this process runs in the initial PID namespace, so every process of
//     the host is visible in /proc (in a container, a holder on the host
//     or in another container would look absent);
//   - no process with ID v exists (or it is a zombie);
//   - no process other than this one has a file of the function open: its
//     sysfs files, or mstflint's lock file or cxray's witness for it. A
//     tool holding the semaphore has the config file open for as long as
//     it runs; a virtual machine the function's device is passed to
//     (/dev/vfio) counts as a user too, whatever it is.
//
// A holder on another host sharing the adapter (multi-host) is not seen;
// the ICMD semaphore is reached through each function's own gateway.
//
// When the answer is false, why says what is known about the holder, for
// the error the caller reports.
func DeadPIDHolder(v uint32, bdf string) (why string, dead bool) {
	if v == 0 {
		return "", false
	}
	if v > 1<<22 { // PID_MAX_LIMIT
		return fmt.Sprintf("0x%x is not a process ID of this host (another host, a virtual machine, or a tool that does not write its PID)", v), false
	}
	if _, alive := procStart(int(v)); alive {
		name, _ := os.ReadFile("/proc/" + strconv.Itoa(int(v)) + "/comm")
		return fmt.Sprintf("process %d (%s) is running", v, strings.TrimSpace(string(name))), false
	}
	if ns, err := os.Readlink("/proc/self/ns/pid"); err != nil || ns != initPIDNS {
		return fmt.Sprintf("process %d does not exist in this PID namespace (%s), which cannot see the host's other processes", v, ns), false
	}
	users, err := FunctionUsers(bdf)
	switch {
	case err != nil:
		return fmt.Sprintf("process %d no longer exists; which processes have %s open is unknown (%v)", v, bdf, err), false
	case len(users) > 0:
		return fmt.Sprintf("process %d no longer exists, but process(es) %v have %s open and may hold it", v, users, bdf), false
	}
	return fmt.Sprintf("process %d no longer exists and no other process has %s open", v, bdf), true
}

// FunctionUsers lists the processes other than this one that have a file
// of the PCI function bdf open (sysfs files, mstflint's lock file, cxray's
// witness) or any VFIO device.
func FunctionUsers(bdf string) ([]int, error) {
	_, b, d, f, err := parseBDF(bdf)
	if err != nil {
		return nil, err
	}
	short := fmt.Sprintf("%02x:%02x.%x", b, d, f) // matches DDDD:BB:DD.F too
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	var users []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", e.Name(), "fd"))
		if err != nil {
			continue // gone meanwhile, or a kernel thread
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join("/proc", e.Name(), "fd", fd.Name()))
			if err != nil {
				continue
			}
			if usesFunction(target, short) {
				users = append(users, pid)
				break
			}
		}
	}
	return users, nil
}

func usesFunction(target, short string) bool {
	switch {
	case strings.HasPrefix(target, "/dev/vfio/"):
		return true
	case strings.HasPrefix(target, "/sys/") && strings.Contains(target, short+"/"):
		return true
	case strings.Contains(target, "mstflint_lockfiles/") && strings.Contains(target, short+"_"):
		return true
	}
	return false
}
