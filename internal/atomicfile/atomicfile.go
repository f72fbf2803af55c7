// Package atomicfile writes files so that a crash leaves the old file or
// the new one, never a part: a temporary file in the same directory, fsync,
// rename, fsync of the directory.
//
// The temporary file is named .NAME.tmp-PID-RANDOM, so the next write to
// the same target removes what a killed writer left behind (its process is
// gone), and never the file of a writer that is still running. The target
// keeps its permission bits (a new file gets 0644); a target that is a
// symbolic link is followed: the link stays, the file it points to is
// replaced.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// NewMode is the mode of a file Write creates.
const NewMode os.FileMode = 0o644

// staleAge is how old a temporary file of an unknown writer (an older
// naming) must be before it is taken as left behind.
const staleAge = 10 * time.Minute

// Write writes data to path through a temporary file and a rename.
func Write(path string, data []byte) error {
	target, err := resolve(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	mode := NewMode
	if st, err := os.Stat(target); err == nil {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("write %s: %s is not a regular file", path, target)
		}
		mode = st.Mode().Perm()
	}
	dir, base := filepath.Dir(target), filepath.Base(target)
	RemoveStale(target)
	tmp, err := os.CreateTemp(dir, tempPrefix(base)+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	name := tmp.Name()
	defer os.Remove(name)
	fail := func(err error) error {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(name, target); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Check says, before the work that makes the data, whether Put can write
// path: a directory, a missing or read-only parent directory are refused
// now, not after minutes of reading a device.
func Check(path string) error {
	if stream(path) {
		return nil // a device or a pipe: Put writes into it
	}
	target, err := resolve(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	st, err := os.Stat(target)
	switch {
	case err == nil && st.IsDir():
		return fmt.Errorf("%s is a directory; give a file name", path)
	case err == nil && !st.Mode().IsRegular():
		return nil // a device or a pipe: Put writes into it
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s: %w", path, err)
	}
	dir := filepath.Dir(target)
	if d, err := os.Stat(dir); err != nil || !d.IsDir() {
		return fmt.Errorf("%s: the folder %s does not exist", path, dir)
	}
	tmp, err := os.CreateTemp(dir, tempPrefix(filepath.Base(target))+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return fmt.Errorf("%s: cannot write in %s: %w", path, dir, err)
	}
	tmp.Close()
	os.Remove(tmp.Name())
	return nil
}

// Put writes data to path: atomically (Write) for a regular or new file,
// and straight into a device or a pipe (/dev/null, /dev/stdout, a FIFO),
// where there is no file to replace.
func Put(path string, data []byte) error {
	if !stream(path) {
		return Write(path, data)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// stream says path exists (the kernel following any links, /dev/stdout's
// to a pipe too) and is neither a regular file nor a directory.
func stream(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.Mode().IsRegular() && !st.IsDir()
}

func tempPrefix(base string) string { return "." + base + ".tmp-" }

// resolve follows symbolic links to the file they name (which need not
// exist yet), at most 40 deep as the kernel does.
func resolve(path string) (string, error) {
	p := path
	for i := 0; i < 40; i++ {
		st, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if st.Mode()&os.ModeSymlink == 0 {
			return p, nil
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(p), link)
		}
		p = link
	}
	return "", fmt.Errorf("too many levels of symbolic links")
}

// RemoveStale removes temporary files that earlier writes of target left
// behind: those whose writer process no longer exists, and, of an older
// naming without a process ID, those older than ten minutes. It returns
// the names removed.
func RemoveStale(target string) []string {
	dir, base := filepath.Dir(target), filepath.Base(target)
	matches, _ := filepath.Glob(filepath.Join(dir, globEscape(tempPrefix(base))+"*"))
	var removed []string
	for _, m := range matches {
		rest := strings.TrimPrefix(filepath.Base(m), tempPrefix(base))
		pidText, _, hasPID := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		stale := false
		switch {
		case hasPID && err == nil && pid > 0:
			stale = pid != os.Getpid() && !alive(pid)
		default:
			if st, err := os.Lstat(m); err == nil && time.Since(st.ModTime()) > staleAge {
				stale = true
			}
		}
		if stale && os.Remove(m) == nil {
			removed = append(removed, m)
		}
	}
	return removed
}

func globEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(s)
}
