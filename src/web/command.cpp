// `dpdb web`: the job in a browser. A hub client like `dpdb dap` (it subscribes and lists), and
// a small HTTP + WebSocket server that pushes what the hub says to the page: plain on loopback,
// over TLS anywhere else (or when asked).
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "cli/commands.hpp"
#include "cli/hub_locator.hpp"
#include "cli/state_dir.hpp"
#include "common/listen_address.hpp"
#include "web/job_view.hpp"
#include "web/page_requests.hpp"
#include "web/server.hpp"
#include "wire/tls.hpp"

namespace dpdb::cli {
namespace {

namespace asio = boost::asio;

constexpr std::int64_t kListingId = 1;

// Waits for the hub's messages on the page's event loop and passes each on.
class HubFeed {
  public:
    HubFeed(asio::io_context& context, wire::Channel& channel, web::JobView& view,
            web::PageRequests& requests, web::Server& server)
        : context_(context),
          readable_(context, channel.fd()),
          channel_(channel),
          view_(view),
          requests_(requests),
          server_(server) {}
    // The descriptor is the channel's: it closes it.
    ~HubFeed() { readable_.release(); }

    void wait() {
        readable_.async_wait(asio::posix::stream_descriptor::wait_read,
                             [this](const boost::system::error_code& error) {
                                 if (error) return;
                                 drain();
                             });
    }

    int status() const { return status_; }

  private:
    void drain() {
        try {
            // With TLS a record may hold several messages: all of them before waiting again.
            while (auto message = channel_.receive(0)) {
                if (requests_.from_hub(*message)) continue;
                if (auto update = view_.apply(*message)) server_.broadcast(update->dump());
            }
        } catch (const std::exception& error) {
            std::fprintf(stderr, "dpdb web: the hub went away: %s\n", error.what());
            status_ = 1;
            context_.stop();
            return;
        }
        wait();
    }

    asio::io_context& context_;
    asio::posix::stream_descriptor readable_;
    wire::Channel& channel_;
    web::JobView& view_;
    web::PageRequests& requests_;
    web::Server& server_;
    int status_ = 0;
};

}  // namespace

int web_command(const std::string& hub, const std::string& listen, bool tls) {
    const auto address = ListenAddress::parse(listen.empty() ? "127.0.0.1:0" : listen);
    if (asio::ip::make_address(address.host).is_unspecified()) {
        // The page answers only requests that name the address it printed (DNS rebinding).
        std::fprintf(stderr,
                     "dpdb web: --listen %s is every address; name the one the browser will "
                     "open\n",
                     address.to_string().c_str());
        return 2;
    }
    const auto targets = locate_hubs(hub);
    if (targets.size() > 1) {
        throw std::runtime_error(
            "several hubs are running: name one with --hub or DPDB_HUB (`dpdb ls` shows them)");
    }
    wire::Channel channel;
    connect_client(channel, targets.front());
    // Plain HTTP only where no one else can listen in: loopback. The certificate is made once
    // there is a job to show, so a mistyped hub leaves none behind.
    std::optional<wire::CertificateFiles> certificate;
    if (tls || !address.is_loopback()) {
        const auto state = default_state_dir();
        make_private_dir(state);
        certificate = own_certificate(state, "web-tls", "dpdb web");
    }
    channel.send(wire::make("subscribe"));
    channel.send(wire::make("list", {{"id", kListingId}}));

    asio::io_context context(1);
    web::JobView view(kListingId);
    // The server is made after the requests it hands pages' messages to, and tells every page
    // through them: it is reached by pointer once it exists.
    web::Server* pages = nullptr;
    web::PageRequests requests(
        view,
        [&channel](const wire::Message& message) {
            try {
                channel.send(message);
            } catch (const std::exception&) {
                // The hub went away: its feed says so and ends dpdb web.
            }
        },
        [&pages](const std::string& text) {
            if (pages != nullptr) pages->broadcast(text);
        });
    web::Server server(context, address, certificate,
                       {[&view] { return view.snapshot().dump(); },
                        [&requests](const std::shared_ptr<web::PageSocket>& page,
                                    const std::string& text) { requests.from_page(page, text); },
                        [&requests](const web::PageSocket* page) { requests.page_closed(page); }});
    pages = &server;
    HubFeed feed(context, channel, view, requests, server);
    feed.wait();
    asio::signal_set stop(context, SIGINT, SIGTERM);
    stop.async_wait([&context](const boost::system::error_code&, int) { context.stop(); });

    // The one line to open (the token is in it, and nowhere else).
    std::printf("dpdb web: open %s\n", server.url().c_str());
    if (certificate) {
        // Self-signed: the browser warns, and this is what to check its certificate against.
        std::printf("dpdb web: its certificate is %s\n",
                    wire::fingerprint_of_file(certificate->cert).c_str());
    }
    std::fflush(stdout);
    context.run();
    return feed.status();
}

}  // namespace dpdb::cli
