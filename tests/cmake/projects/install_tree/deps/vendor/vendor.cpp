// A vendor's library, installed under /opt by its own installer.
int vendor_level() { return 4; }
