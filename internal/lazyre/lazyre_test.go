package lazyre

import "testing"

func TestNewCompilesOnceOnFirstUse(t *testing.T) {
	re := New(`^a+$`)
	first := re()
	if !first.MatchString("aaa") || first.MatchString("b") {
		t.Fatal("the expression does not match as compiled")
	}
	if re() != first {
		t.Error("a second call compiled again")
	}
}

func TestNewPanicsOnlyWhenUsed(t *testing.T) {
	re := New(`(`) // invalid, but never used before the deferred check
	defer func() {
		if recover() == nil {
			t.Error("an invalid expression compiled")
		}
	}()
	re()
}
