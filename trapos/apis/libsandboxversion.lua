-- libsandboxversion: the version of the trapos-sandbox package these files belong to. It must
-- equal "version" in packages/trapos-sandbox/ccpm.json (tests/packages checks it); the hello
-- sends it as clientVersion and `sandbox --version` prints it.

return {
  VERSION = "0.5.10",
};
