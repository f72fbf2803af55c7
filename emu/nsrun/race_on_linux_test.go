//go:build race

package nsrun_test

const raceDetector = true
