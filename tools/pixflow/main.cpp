// pixflow: the command-line tool (docs/contract.md §5). Parses the command line with CLI11 and maps
// every failure to one stderr line and an exit code (0 ok, 1 failed operation, 2 bad
// usage, 3 partial batch).
#include <CLI/CLI.hpp>

#include <iostream>
#include <new>
#include <string>
#include <vector>

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

  // Options shared by `run` and `convert`.
  auto add_run_options = [](CLI::App* cmd, RunOptions& o) {
    cmd->add_option(
        "--format", o.format,
        "the outputs' format: png, jpg, tif, webp, pgm, ppm, pnm or npy (a folder OUTPUT: "
        "the files' new extension; required with OUTPUT '-')");
    cmd->add_option("--quality", o.quality, "JPEG and WebP quality, 1..100 (default 95)");
    cmd->add_flag("--lossless", o.lossless, "WebP: lossless (instead of --quality)");
    cmd->add_option("--compression", o.compression,
                    "PNG: zlib level 0..9 (default 6); TIFF: 0 uncompressed, 1..9 Deflate");
    cmd->add_flag("--strip", o.strip,
                  "do not carry the input's ICC profile and resolution (DPI) to the output");
    cmd->add_flag("-r,--recursive", o.recursive,
                  "folders: every sub-folder too, kept under OUTPUT");
    cmd->add_option("--backend", o.backend,
                    "auto (CUDA if a GPU is present, else CPU), cpu, "
                    "cuda, opencl, or ref (the scalar reference, for comparison)")
        ->check(CLI::IsMember({"auto", "cpu", "cuda", "opencl", "ref"}));
    cmd->add_option("--device", o.device,
                    "device number: CUDA (default 0; a batch uses all) or OpenCL (default 0, as "
                    "`pixflow info` lists them)");
    cmd->add_option("--threads", o.threads,
                    "threads of the cpu backend per image (default 0: every hardware thread, "
                    "shared among --jobs)")
        ->check(CLI::Range(0, 4096));
    cmd->add_option("--jobs", o.jobs,
                    "batch on the cpu backend: items processed at once (default 1)");
    cmd->add_flag("--keep-going", o.keep_going,
                  "batch: try every item, report failures at the end, exit 3 if any failed");
    cmd->add_flag("--overwrite-input", o.overwrite_input,
                  "allow OUTPUT to be INPUT (or a with=/map file); it is replaced atomically "
                  "after everything is read");
    cmd->add_flag("--no-clobber", o.no_clobber,
                  "keep outputs that exist (their items are skipped, before any decoding)");
    cmd->add_option("--progress", o.progress,
                    "auto (a bar when stderr is a terminal), bar, json (one line per item "
                    "on stdout) or none")
        ->check(CLI::IsMember({"auto", "bar", "json", "none"}));
    cmd->add_option("--max-side", o.max_side, "decoder limit: pixels per side");
    cmd->add_option("--max-pixels", o.max_pixels, "decoder limit: pixels per image");
    cmd->add_option("--max-bytes", o.max_bytes, "decoder limit: decoded bytes per image");
  };

  RunOptions run;
  CLI::App* run_cmd = app.add_subcommand(
      "run", "run a pipeline on images: files, folders, glob patterns, or '-' (stdin)");
  run_cmd
      ->add_option("PIPELINE", run.pipeline,
                   "e.g. \"gray | median k=5 | sobel dx=1 dy=0\"; \"\" converts only")
      ->required();
  run_cmd
      ->add_option("INPUT", run.inputs,
                   "image files, folders (batch), glob patterns, or '-' (standard input)")
      ->required();
  run_cmd
      ->add_option("-o,--output", run.output,
                   "output file, folder (batch), pattern ('out/{stem}.jpg'), or '-' (stdout)")
      ->required();
  add_run_options(run_cmd, run);

  RunOptions conv;
  std::vector<std::string> conv_files;
  CLI::App* conv_cmd = app.add_subcommand(
      "convert", "convert formats: pixflow convert IN OUT, or IN... -o OUT (run with no op)");
  conv_cmd->add_option("FILES", conv_files, "INPUT... [OUTPUT] (OUTPUT last unless -o is given)")
      ->required();
  conv_cmd->add_option("-o,--output", conv.output,
                       "output file, folder (batch), pattern ('out/{stem}.jpg'), or '-' (stdout)");
  add_run_options(conv_cmd, conv);

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
    if (sub != "run" && sub != "convert" && sub != "info" && sub != "demo") {
      print_error("unknown subcommand '" + sub +
                  "' (expected run, convert, info or demo; see 'pixflow --help')");
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
    if (conv_cmd->parsed()) {
      conv.inputs = conv_files;
      if (conv.output.empty()) {
        if (conv_files.size() < 2)
          throw UsageError("convert needs INPUT and OUTPUT (pixflow convert in.png out.jpg)");
        conv.output = conv_files.back();
        conv.inputs.pop_back();
      }
      return run_command(conv);
    }
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
