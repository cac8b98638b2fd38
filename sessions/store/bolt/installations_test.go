package bolt

import (
	"testing"

	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestInstallationConformance(t *testing.T) { storetest.RunInstallations(t, fresh) }

func TestSinkConformance(t *testing.T) { storetest.RunSinks(t, fresh) }
