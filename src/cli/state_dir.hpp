// This user's dpdb state directory (the hub's secret, certificate and store) and the TLS
// certificates kept there for the servers it runs when given none.
#pragma once

#include <string>

#include "wire/tls.hpp"

namespace dpdb::cli {

// $XDG_STATE_HOME/dpdb/hub, else ~/.local/state/dpdb/hub. Throws std::runtime_error.
std::string default_state_dir();
// Makes `dir` (and its parents) if need be; it must be this user's, and is left 0700. Throws
// std::runtime_error.
void make_private_dir(const std::string& dir);

// `state_dir`/`name`-cert.pem and -key.pem: a self-signed pair for `common_name` (wire/tls) made
// at first use and kept, so that its fingerprint, once checked, stays the same. Throws
// std::runtime_error.
wire::CertificateFiles own_certificate(const std::string& state_dir, const std::string& name,
                                       const std::string& common_name);

}  // namespace dpdb::cli
