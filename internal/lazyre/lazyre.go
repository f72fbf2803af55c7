// Package lazyre is a regular expression compiled on its first use.
//
// A package-level regexp.MustCompile runs when the program starts, in every
// command: the cxray binary holds over a hundred of them (log, devlink and
// tool-output readers) and compiling them was a large share of the start-up
// of `cxray version` (docs/performance.md, "The CLI's size and start-up").
// A *Regexp here keeps regexp's method names, so a package-level
// declaration changes and its uses do not.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled by its first method call. It is
// safe for concurrent use, as regexp.Regexp is.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

var (
	mu  sync.Mutex
	all []*Regexp
)

// New returns expr, to be compiled on first use. A bad expression panics
// then, as regexp.MustCompile would at start-up; CompileAll finds it in a
// test first.
func New(expr string) *Regexp {
	r := &Regexp{expr: expr}
	mu.Lock()
	all = append(all, r)
	mu.Unlock()
	return r
}

// CompileAll compiles every expression New has been given in this program
// and returns those that do not compile, as errors. A test of a main
// package calls it so a bad pattern fails the tests, not a user's command.
func CompileAll() []error {
	mu.Lock()
	rs := append([]*Regexp(nil), all...)
	mu.Unlock()
	var errs []error
	for _, r := range rs {
		if _, err := regexp.Compile(r.expr); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Count is how many expressions New has been given (for tests).
func Count() int {
	mu.Lock()
	defer mu.Unlock()
	return len(all)
}

// Compiled reports whether r has been compiled (for tests that check a
// command compiles nothing it does not use).
func (r *Regexp) Compiled() bool {
	mu.Lock()
	defer mu.Unlock()
	return r.re != nil
}

// Regexp returns the compiled expression.
func (r *Regexp) Regexp() *regexp.Regexp {
	r.once.Do(func() {
		re := regexp.MustCompile(r.expr)
		mu.Lock()
		r.re = re
		mu.Unlock()
	})
	return r.re
}

func (r *Regexp) String() string { return r.expr }

func (r *Regexp) MatchString(s string) bool  { return r.Regexp().MatchString(s) }
func (r *Regexp) Match(b []byte) bool        { return r.Regexp().Match(b) }
func (r *Regexp) FindString(s string) string { return r.Regexp().FindString(s) }
func (r *Regexp) FindStringIndex(s string) []int {
	return r.Regexp().FindStringIndex(s)
}
func (r *Regexp) FindStringSubmatch(s string) []string {
	return r.Regexp().FindStringSubmatch(s)
}
func (r *Regexp) FindStringSubmatchIndex(s string) []int {
	return r.Regexp().FindStringSubmatchIndex(s)
}
func (r *Regexp) FindAllString(s string, n int) []string {
	return r.Regexp().FindAllString(s, n)
}
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int {
	return r.Regexp().FindAllStringIndex(s, n)
}
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.Regexp().FindAllStringSubmatch(s, n)
}
func (r *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return r.Regexp().FindAllStringSubmatchIndex(s, n)
}
func (r *Regexp) FindSubmatch(b []byte) [][]byte { return r.Regexp().FindSubmatch(b) }
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.Regexp().ReplaceAllString(src, repl)
}
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.Regexp().ReplaceAllStringFunc(src, repl)
}
func (r *Regexp) Split(s string, n int) []string { return r.Regexp().Split(s, n) }
func (r *Regexp) SubexpNames() []string          { return r.Regexp().SubexpNames() }
func (r *Regexp) SubexpIndex(name string) int    { return r.Regexp().SubexpIndex(name) }
func (r *Regexp) NumSubexp() int                 { return r.Regexp().NumSubexp() }
