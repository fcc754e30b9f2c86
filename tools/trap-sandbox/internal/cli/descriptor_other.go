//go:build !unix

package cli

import (
	"errors"
	"os"
)

// descriptorOf names no descriptor where the system has no descriptor links.
func descriptorOf(string) (int, bool) { return 0, false }

// takeDescriptor is never called where descriptorOf names none.
func takeDescriptor(int) (*os.File, error) { return nil, errors.ErrUnsupported }
