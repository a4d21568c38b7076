#include "util/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include "util/fs.hpp"

extern char** environ;

namespace arec {

namespace {

// Writes `input` to a pipe whose reader may already have gone: SIGPIPE is blocked for this thread
// meanwhile, and one it raised is taken back, so the caller lives on and sees EPIPE instead.
void write_input(int fd, std::string_view input) {
  sigset_t pipe_signal, previous;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
  bool broken = false;
  while (!input.empty()) {
    const ssize_t n = ::write(fd, input.data(), input.size());
    if (n > 0) {
      input.remove_prefix(static_cast<std::size_t>(n));
    } else if (errno != EINTR) {
      broken = errno == EPIPE;
      break;
    }
  }
  if (broken) {
    const timespec zero{};
    sigtimedwait(&pipe_signal, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

// Reads until end of file, the limit or the deadline; false when the deadline passed first.
bool read_output(int fd, std::string& out, std::size_t max_output, std::chrono::steady_clock::time_point deadline) {
  std::array<char, 4096> buffer{};
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return ready == 0 ? false : true;
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    if (out.size() < max_output)
      out.append(buffer.data(), std::min(static_cast<std::size_t>(n), max_output - out.size()));
  }
}

// The environment of a program run with `extra` set: arec's own, each variable `extra` names replaced.
std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    const bool replaced = std::any_of(extra.begin(), extra.end(), [&](const std::string& x) {
      return x.size() > name.size() && x.compare(0, name.size(), name) == 0 && x[name.size()] == '=';
    });
    if (!replaced) out.emplace_back(entry);
  }
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

}  // namespace

Result<ProcessOutput> run_process(const std::vector<std::string>& argv, std::string_view input,
                                  std::chrono::milliseconds timeout, std::size_t max_output,
                                  const ProcessOptions& options) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return fail_input("running " + argv.at(0) + ": " + fs::errno_text(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(in[0]);
    ::close(in[1]);
    return fail_input("running " + argv.at(0) + ": " + fs::errno_text(error));
  }
  fs::Fd stdin_read(in[0]), stdin_write(in[1]), stdout_read(out[0]), stdout_write(out[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, stdin_read.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, stdout_write.get(), STDOUT_FILENO);
  if (options.standard_error == StandardError::with_output) {
    posix_spawn_file_actions_adddup2(&actions, stdout_write.get(), STDERR_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> environment;
  std::vector<char*> env;
  if (!options.environment.empty()) {
    environment = environment_with(options.environment);
    for (auto& e : environment) env.push_back(e.data());
    env.push_back(nullptr);
  }
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), env.empty() ? environ : env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return fail_input("running " + argv[0] + ": " + fs::errno_text(rc));
  stdin_read = fs::Fd();
  stdout_write = fs::Fd();

  write_input(stdin_write.get(), input);
  stdin_write = fs::Fd();
  ProcessOutput result;
  const bool finished =
      read_output(stdout_read.get(), result.out, max_output, std::chrono::steady_clock::now() + timeout);
  if (!finished) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = finished && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace arec
