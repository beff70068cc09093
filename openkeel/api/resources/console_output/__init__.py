"""``os-getConsoleOutput`` on /servers/{id}/action: the guest's console log."""
