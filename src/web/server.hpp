// The HTTP and WebSocket side of `dpdb web` (Boost.Beast): the page's files to the token's
// holder, and the job's updates pushed to every page that holds a WebSocket.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>
#include <optional>
#include <string>

#include "common/listen_address.hpp"
#include "web/page_socket.hpp"
#include "wire/tls.hpp"

namespace dpdb::web {

class Server {
  public:
    // Listens at once (throws std::runtime_error with a one-line reason), over TLS if given a
    // certificate; `handlers` say what a page is sent first and what becomes of what it sends.
    Server(boost::asio::io_context& context, const ListenAddress& listen,
           const std::optional<wire::CertificateFiles>& tls, PageHandlers handlers);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // The one URL to open: it carries the one-time token.
    std::string url() const;
    // Sends `text` to every connected page.
    void broadcast(const std::string& text);

    struct State;

  private:
    std::shared_ptr<State> state_;
};

}  // namespace dpdb::web
