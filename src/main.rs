//! The `scaling-facts` binary: parses the configuration and hands over to the library.

use anyhow::Context;
use clap::Parser;
use tokio_util::sync::CancellationToken;

use scaling_facts::config::{Cli, Command, LogFormat};
use scaling_facts::serve::{auth, openapi};
use scaling_facts::service::{Service, cancel_on_signals};
use scaling_facts::store::Store;
use scaling_facts::telemetry;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(mut config) => {
            config
                .database
                .read_url_file()
                .context("reading --database-url-file")?;
            let traces = telemetry::traces::Traces::from_env().context("setting up traces")?;
            telemetry::init(config.log_format, &traces);
            let shutdown = CancellationToken::new();
            cancel_on_signals(shutdown.clone());
            let service = Service::build(&config, shutdown).await?;
            let ran = service.run(&config).await;
            traces.shutdown().await;
            ran
        }
        Command::Migrate(mut db) => {
            telemetry::init_logging(LogFormat::Text);
            db.read_url_file().context("reading --database-url-file")?;
            let store = Store::connect(&db)
                .await
                .context("connecting to the database")?;
            store.migrate().await.context("migrating")?;
            store.close().await;
            tracing::info!("migrations applied");
            Ok(())
        }
        #[cfg(feature = "sim")]
        Command::Sim(config) => {
            use scaling_facts_sim::{Scenario, Simulator};
            telemetry::init_logging(LogFormat::Text);
            anyhow::ensure!(
                config.sim_listen_addr.ip().is_loopback(),
                "the simulator only listens on loopback addresses"
            );
            let scenario = match &config.scenario {
                Some(path) => Scenario::load(path)?,
                None => Scenario::default(),
            };
            let shutdown = CancellationToken::new();
            cancel_on_signals(shutdown.clone());
            let sim = Simulator::start(config.sim_listen_addr, scenario, shutdown.clone())
                .await
                .context("starting the simulator")?;
            sim.write_kubeconfig(&config.kubeconfig_out)
                .context("writing the kubeconfig")?;
            tracing::info!(url = %sim.url(), kubeconfig = %config.kubeconfig_out.display(), "simulator running");
            shutdown.cancelled().await;
            sim.stop().await;
            Ok(())
        }
        #[cfg(feature = "sim")]
        Command::Soak(config) => {
            telemetry::init_logging(LogFormat::Text);
            let outcome = scaling_facts::soak::run(&config).await?;
            println!("{}", outcome.line);
            if !outcome.passed() {
                std::process::exit(1);
            }
            Ok(())
        }
        #[cfg(feature = "sim")]
        Command::Demo(config) => {
            // The table is the demo's output; the service's logs would drown it.
            if std::env::var_os("RUST_LOG").is_none() {
                // SAFETY: set before any thread reads the environment.
                unsafe { std::env::set_var("RUST_LOG", "error") };
            }
            telemetry::init_logging(LogFormat::Text);
            let shutdown = CancellationToken::new();
            cancel_on_signals(shutdown.clone());
            scaling_facts::demo::run(&config, shutdown).await
        }
        #[cfg(feature = "sim")]
        Command::DemoClient(config) => {
            telemetry::init_logging(LogFormat::Text);
            scaling_facts::demo::run_client(&config).await
        }
        Command::Openapi => {
            print!("{}", openapi::document());
            Ok(())
        }
        Command::Token(args) => {
            let (token, entry) =
                auth::new_token(&args.name, &args.scopes).map_err(anyhow::Error::msg)?;
            eprintln!("Token (shown once; give it to the caller):");
            println!("{token}");
            eprintln!("\nAdd this entry to the tokens file:\n\n{entry}");
            Ok(())
        }
    }
}
