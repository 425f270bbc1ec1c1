// pixflow: the command-line tool (docs/contract.md §5). Parses the command line with CLI11 and maps
// every failure to one stderr line and an exit code (0 ok, 1 failed operation, 2 bad
// usage, 3 partial batch).
#include <CLI/CLI.hpp>

#include <iostream>
#include <new>
#include <string>

#include "pixflow/error.hpp"
#include "tools/pixflow/cli.hpp"

namespace pixflow::cli {

void print_error(const std::string& message) {
  std::cerr << "pixflow: " << escape_text(message) << std::endl;
}

}  // namespace pixflow::cli

int main(int argc, char** argv) {
  using namespace pixflow::cli;
  CLI::App app{"pixflow: fast classic image filters on CUDA and CPU", "pixflow"};
  app.set_version_flag("--version", std::string("pixflow ") + PIXFLOW_VERSION);
  app.require_subcommand(1);

  RunOptions run;
  CLI::App* run_cmd =
      app.add_subcommand("run", "run a pipeline on an image, or on every image of a directory");
  run_cmd->add_option("PIPELINE", run.pipeline, "e.g. \"gray | median k=5 | sobel dx=1 dy=0\"")
      ->required();
  run_cmd->add_option("INPUT", run.input, "input image file, or a directory (batch)")->required();
  run_cmd->add_option("-o,--output", run.output, "output file, or directory (batch)")->required();
  run_cmd
      ->add_option("--backend", run.backend,
                   "auto (CUDA if a GPU is present, else CPU), cpu, "
                   "cuda, opencl, or ref (the scalar reference, for comparison)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda", "opencl", "ref"}));
  run_cmd->add_option("--device", run.device,
                      "device number: CUDA (default 0; a batch uses all) or OpenCL (default 0, as "
                      "`pixflow info` lists them)");
  run_cmd
      ->add_option("--threads", run.threads,
                   "threads of the cpu backend per image (default 0: every hardware thread)")
      ->check(CLI::Range(0, 4096));
  run_cmd->add_flag("--keep-going", run.keep_going,
                    "batch: try every item, report failures at the end, exit 3 if any failed");
  run_cmd->add_flag("--overwrite-input", run.overwrite_input,
                    "allow OUTPUT to be INPUT (or a with=/map file); it is replaced atomically "
                    "after everything is read");
  run_cmd->add_flag("--no-clobber", run.no_clobber,
                    "keep outputs that exist (their items are skipped, before any decoding)");
  run_cmd
      ->add_option("--progress", run.progress,
                   "auto (a bar when stderr is a terminal), bar, json (one line per item "
                   "on stdout) or none")
      ->check(CLI::IsMember({"auto", "bar", "json", "none"}));
  run_cmd->add_option("--max-side", run.max_side, "decoder limit: pixels per side");
  run_cmd->add_option("--max-pixels", run.max_pixels, "decoder limit: pixels per image");
  run_cmd->add_option("--max-bytes", run.max_bytes, "decoder limit: decoded bytes per image");

  InfoOptions info;
  CLI::App* info_cmd =
      app.add_subcommand("info", "version, build, devices and every op with its parameters");
  info_cmd->add_flag("--markdown", info.markdown, "print the op table as Markdown");

  DemoOptions demo;
  CLI::App* demo_cmd = app.add_subcommand(
      "demo", "denoise and edge-detect the bundled photo; writes five PNGs and a timing");
  demo_cmd->add_option("-o,--output", demo.output_dir, "output directory")->capture_default_str();
  demo_cmd->add_option("--input", demo.input, "another u8 RGB or gray image to use");
  demo_cmd->add_option("--seed", demo.seed, "seed of the salt-and-pepper noise")
      ->capture_default_str();

  // CLI11 reports an unknown first word only as "A subcommand is required"; name it.
  if (argc > 1 && argv[1][0] != '-') {
    const std::string sub = argv[1];
    if (sub != "run" && sub != "info" && sub != "demo") {
      print_error("unknown subcommand '" + sub +
                  "' (expected run, info or demo; see 'pixflow --help')");
      return kUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    print_error(std::string(e.what()) + " (see 'pixflow --help')");
    return kUsage;
  }

  try {
    if (run_cmd->parsed()) return run_command(run);
    if (info_cmd->parsed()) return info_command(info);
    if (demo_cmd->parsed()) return demo_command(demo);
    print_error("no subcommand (see 'pixflow --help')");
    return kUsage;
  } catch (const UsageError& e) {
    print_error(e.what());
    return kUsage;
  } catch (const pixflow::Error& e) {
    print_error(e.what());
    return kFailed;
  } catch (const std::bad_alloc&) {
    print_error("out of host memory");
    return kFailed;
  } catch (const std::exception& e) {
    print_error(e.what());
    return kFailed;
  }
}
