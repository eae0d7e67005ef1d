//! Where a reference's tools are made ready: a scratch directory for
//! compiled programs and the tiny helper's copy, the servers tools load,
//! the usable CPUs and the compiler.

use super::ready::InDir;
use super::server::Running;
use super::{compile, fill_text, param, Arg, Cpus, Prog, Ready, Server, Tool};
use crate::bench::os::tiny::Tiny;
use crate::bench::{BenchError, ScratchDir};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where tools are made ready: a scratch directory for compiled programs
/// and the tiny helper's copy, the usable CPUs and the compiler.
pub struct Workshop {
    /// The servers tools load, started the first time one names them
    /// (or why they could not start); dropped first, so stopped before
    /// their directories go.
    servers: Vec<(&'static str, Result<Running, String>)>,
    dir: ScratchDir,
    /// Where the tiny helper's copy goes when shared memory takes none.
    base: PathBuf,
    cpus: Vec<usize>,
    /// Each source's builds, by its name and flags.
    built: BTreeMap<(&'static str, &'static [&'static str]), Result<PathBuf, String>>,
    tiny: Option<Result<Tiny, String>>,
    /// The directories a case's `dir` names, for tools that work on one.
    dirs: Vec<crate::config::NamedDir>,
}

impl Workshop {
    /// A workshop in a new directory under `base` (removed when dropped).
    ///
    /// # Errors
    /// The directory cannot be made, or the usable CPUs cannot be read.
    pub fn new(base: &Path) -> Result<Workshop, BenchError> {
        let cpus = crate::bench::affinity::allowed_cpus()?;
        Ok(Workshop {
            servers: Vec::new(),
            dir: ScratchDir::new(base, "fidelity")?,
            base: base.to_path_buf(),
            cpus,
            built: BTreeMap::new(),
            tiny: None,
            dirs: Vec::new(),
        })
    }

    /// The directories the cases' `dir` parameters name (`--dir`).
    pub fn with_dirs(mut self, dirs: Vec<crate::config::NamedDir>) -> Workshop {
        self.dirs = dirs;
        self
    }

    /// How many CPUs may be used.
    pub fn cpus(&self) -> usize {
        self.cpus.len().max(1)
    }

    /// The first usable CPU.
    pub fn first_cpu(&self) -> usize {
        self.cpus.first().copied().unwrap_or(0)
    }

    /// The CPU `on` names, if any; None where the scheduler places.
    ///
    /// # Errors
    /// The second CPU where only one may be used.
    pub fn cpu(&self, on: Cpus) -> Result<Option<usize>, String> {
        match on {
            Cpus::Any => Ok(None),
            Cpus::First => Ok(Some(self.first_cpu())),
            Cpus::Second => self.cpus.get(1).copied().map(Some).ok_or_else(|| {
                "only one CPU may be used here: no second CPU to place it on".into()
            }),
        }
    }

    /// The loopback port of `server`, started the first time it is asked
    /// for (on the first usable CPU where it asks for that).
    ///
    /// # Errors
    /// Why it cannot run here.
    pub fn port(&mut self, server: &'static Server) -> Result<u16, String> {
        if let Some((_, started)) = self.servers.iter().find(|(n, _)| *n == server.name) {
            return started.as_ref().map(|r| r.port).map_err(Clone::clone);
        }
        let cpu = server.on_first_cpu.then(|| self.first_cpu());
        let started = Running::start(server, &self.base, cpu)
            .map_err(|e| format!("its server, {}, cannot run here: {e}", server.name));
        let port = started.as_ref().map(|r| r.port).map_err(Clone::clone);
        self.servers.push((server.name, started));
        port
    }

    /// The PIDs of the servers started.
    #[cfg(test)]
    pub(crate) fn server_pids(&self) -> Vec<u32> {
        self.servers
            .iter()
            .filter_map(|(_, r)| r.as_ref().ok().map(Running::pid))
            .collect()
    }

    /// The URL of `path` on `server` (started if need be).
    ///
    /// # Errors
    /// Why the server cannot run here.
    pub fn url(&mut self, server: &'static Server, path: &str) -> Result<String, String> {
        Ok(format!("http://127.0.0.1:{}{path}", self.port(server)?))
    }

    /// `tool` made ready to run here for the case whose planned
    /// parameters are `case`: compiled, its arguments filled in, and run
    /// once to see that it gives a figure.
    ///
    /// # Errors
    /// Why it cannot run here, in words for the row.
    pub fn ready(&mut self, tool: &Tool, case: &BTreeMap<String, Value>) -> Result<Ready, String> {
        // where it runs first: a tool placed on a CPU that is not here
        // starts no server
        let on = self.cpu(tool.on)?;
        let program = match tool.program {
            Prog::Path(_) | Prog::Envbench => tool.program.path()?,
            Prog::C {
                name,
                source,
                flags,
            } => self.compiled(name, source, flags)?,
        };
        if let Some(check) = tool.check {
            check(&program)?;
        }
        let input = match tool.input {
            Some(i) => Some((i.file, fill_text(i.text, case)?)),
            None => None,
        };
        let mut args = Vec::with_capacity(tool.args.len());
        for a in tool.args {
            args.push(self.fill(*a, case)?);
        }
        let mut env = Vec::with_capacity(tool.env.len());
        for (k, a) in tool.env {
            env.push(((*k).to_string(), self.fill(*a, case)?));
        }
        let beside = match tool.beside {
            Some(list) => {
                let mut filled = Vec::with_capacity(list.len());
                for a in list {
                    filled.push(self.fill(*a, case)?);
                }
                Some(filled)
            }
            None => None,
        };
        let on_dir = match tool.on_dir {
            Some(how) => {
                let name = param(case, "dir")?;
                let path = self
                    .dirs
                    .iter()
                    .find(|d| d.name == name)
                    .map(|d| d.path.clone())
                    .ok_or_else(|| {
                        format!("no directory {name} was given for the case to work in")
                    })?;
                let mut prepare = Vec::with_capacity(how.prepare.len());
                for a in how.prepare {
                    prepare.push(self.fill(*a, case)?);
                }
                Some(InDir {
                    path,
                    prepare,
                    warm_up: how.warm_up,
                    stderr: how.stderr,
                })
            }
            None => None,
        };
        let ready = Ready {
            name: match on {
                None => tool.name.to_string(),
                Some(cpu) => format!("{} on CPU {cpu}", tool.name),
            },
            program,
            args,
            env,
            on,
            read: tool.read,
            processes: tool.processes.max(1),
            input,
            on_dir,
            beside,
            // beside the workshop, not in it: Open MPI's session directory
            // under it holds a socket, whose path may not pass 107 bytes
            scratch: self.base.clone(),
            cwd: None,
        };
        ready.check()?;
        Ok(ready)
    }

    /// `tool`, a program on the PATH, with `args` in place of its own (a
    /// person's command, which no declared tool holds), run in `cwd`
    /// itself; checked by one run, as [`Workshop::ready`]'s tools are.
    ///
    /// # Errors
    /// The program is not on the PATH, or its run fails or gives no figure.
    pub fn ready_in(&self, tool: &Tool, args: Vec<String>, cwd: &Path) -> Result<Ready, String> {
        let ready = Ready {
            name: tool.name.to_string(),
            program: tool.program.path()?,
            args,
            env: Vec::new(),
            on: None,
            read: tool.read,
            processes: tool.processes.max(1),
            input: None,
            on_dir: None,
            beside: None,
            scratch: self.base.clone(),
            cwd: Some(cwd.to_path_buf()),
        };
        ready.check()?;
        Ok(ready)
    }

    /// `arg` as the tool is given it, for the case planned as `case`.
    fn fill(&mut self, arg: Arg, case: &BTreeMap<String, Value>) -> Result<String, String> {
        Ok(match arg {
            Arg::Text(t) => t.to_string(),
            Arg::FirstCpu => self.first_cpu().to_string(),
            Arg::SecondCpu => self.cpu(Cpus::Second)?.unwrap_or_default().to_string(),
            Arg::Port(server) => self.port(server)?.to_string(),
            Arg::Url(server, path) => self.url(server, path)?,
            Arg::Tiny => self.tiny_path()?,
            Arg::Param { prefix, key } => format!("{prefix}{}", param(case, key)?),
            Arg::FirstCpus { prefix, key } => {
                let n: usize = param(case, key)?
                    .parse()
                    .map_err(|_| format!("the case's {key} is not a count"))?;
                if n > self.cpus.len() {
                    return Err(format!(
                        "{n} CPUs asked for a thread each, {} usable here",
                        self.cpus.len()
                    ));
                }
                let list: Vec<String> = self.cpus[..n].iter().map(ToString::to_string).collect();
                format!("{prefix}{}", list.join(","))
            }
        })
    }

    /// The program `source` compiles to with `flags`, compiled once.
    fn compiled(
        &mut self,
        name: &'static str,
        source: &str,
        flags: &'static [&'static str],
    ) -> Result<PathBuf, String> {
        if let Some(done) = self.built.get(&(name, flags)) {
            return done.clone();
        }
        let stem = format!("{}-{}", name.replace(['/', '.'], "-"), self.built.len());
        let done = compile(self.dir.path(), &stem, name, source, flags);
        self.built.insert((name, flags), done.clone());
        done
    }

    /// The tiny helper's path, copied once into a new directory in shared
    /// memory (as envbench runs it from a memfd), else under the base.
    fn tiny_path(&mut self) -> Result<String, String> {
        let base = self.base.clone();
        let tiny = self.tiny.get_or_insert_with(|| {
            Tiny::load_in(Path::new("/dev/shm")).or_else(|_| Tiny::load_in(&base))
        });
        match tiny {
            Ok(t) => Ok(t.path().display().to_string()),
            Err(e) => Err(e.clone()),
        }
    }
}
