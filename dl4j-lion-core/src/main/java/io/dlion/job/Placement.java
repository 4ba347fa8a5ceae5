package io.dlion.job;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Where this process sits in a job, as the cluster's scheduler tells it through the environment: its rank (the
 * worker id), the number of workers, its local rank on the host (which GPU it drives) and the host (and port) of the
 * job's first process, where the aggregation server runs. Read from, in this order:
 * <ul>
 *   <li>Slurm: {@code SLURM_PROCID}, {@code SLURM_NTASKS}, {@code SLURM_LOCALID}, the first host of
 *       {@code SLURM_JOB_NODELIST} (e.g. {@code gpu[03-08,11]} → {@code gpu03});</li>
 *   <li>torchrun: {@code RANK}, {@code WORLD_SIZE}, {@code LOCAL_RANK}, {@code MASTER_ADDR}, {@code MASTER_PORT};</li>
 *   <li>OpenMPI: {@code OMPI_COMM_WORLD_RANK}, {@code OMPI_COMM_WORLD_SIZE}, {@code OMPI_COMM_WORLD_LOCAL_RANK};</li>
 *   <li>Kubernetes Indexed Job: {@code JOB_COMPLETION_INDEX} (the rank only: the manifest gives the number of workers
 *       and the server's headless-Service name).</li>
 * </ul>
 * Every source that is present must agree with the others on what they both say; a conflict is an error naming
 * both variables. Explicit values (command-line flags) win over every source ({@link #rankOr}, {@link #workersOr},
 * {@link #serverHostOr}).
 *
 * @param rank       this process's rank, or -1 when no source gives one.
 * @param workers    the number of processes, or -1.
 * @param localRank  the rank on this host, or -1.
 * @param serverHost the host of rank 0, or null.
 * @param serverPort the port the launcher reserved on rank 0's host, or -1.
 * @param sources    what each value was read from, e.g. {@code rank=SLURM_PROCID}, for the log.
 */
public record Placement(int rank, int workers, int localRank, String serverHost, int serverPort, Map<String, String> sources) {

    /** The variables read, for the message when nothing is found. */
    public static final List<String> VARIABLES = List.of("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_JOB_NODELIST", "RANK",
        "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_LOCAL_RANK", "JOB_COMPLETION_INDEX");

    /**
     * @param env the environment, e.g. {@code System.getenv()}.
     * @return what the scheduler's variables say; fields no variable gives are -1 / null.
     * @throws IllegalArgumentException when two variables disagree or one is malformed, naming them.
     */
    public static Placement fromEnvironment(final Map<String, String> env) {
        final Map<String, String> sources = new LinkedHashMap<>();
        final int rank = agree(env, sources, "rank", List.of("SLURM_PROCID", "RANK", "OMPI_COMM_WORLD_RANK", "JOB_COMPLETION_INDEX"));
        final int workers = agree(env, sources, "workers", List.of("SLURM_NTASKS", "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"));
        final int localRank = agree(env, sources, "localRank", List.of("SLURM_LOCALID", "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"));
        String host = null;
        final List<String[]> hosts = new ArrayList<>();
        if (env.get("SLURM_JOB_NODELIST") != null) {
            hosts.add(new String[] {"SLURM_JOB_NODELIST", firstHost(env.get("SLURM_JOB_NODELIST"))});
        }
        if (env.get("MASTER_ADDR") != null) {
            hosts.add(new String[] {"MASTER_ADDR", env.get("MASTER_ADDR").trim()});
        }
        for (final String[] h : hosts) {
            if (host == null) {
                host = h[1];
                sources.put("serverHost", h[0]);
            } else if (!host.equals(h[1])) {
                throw new IllegalArgumentException("the scheduler's variables disagree on the server host: " + sources.get("serverHost") + " gives "
                    + host + ", " + h[0] + " gives " + h[1]);
            }
        }
        int port = -1;
        if (env.get("MASTER_PORT") != null) {
            port = parse(env, "MASTER_PORT");
            sources.put("serverPort", "MASTER_PORT");
        }
        if (rank >= 0 && workers >= 0 && rank >= workers) {
            throw new IllegalArgumentException("rank " + rank + " (" + sources.get("rank") + ") is not below the number of workers " + workers + " ("
                + sources.get("workers") + ")");
        }
        return new Placement(rank, workers, localRank, host, port, Map.copyOf(sources));
    }

    /**
     * @param explicit the {@code --worker-id} flag, or null when not given (it wins over the scheduler).
     * @return this process's rank.
     * @throws IllegalArgumentException when neither gives it, saying what was looked for.
     */
    public int rankOr(final Integer explicit) {
        return explicit != null ? explicit : require(rank, "--worker-id", "rank");
    }

    /**
     * @param explicit the {@code --workers} flag, or null when not given.
     * @return the number of workers.
     */
    public int workersOr(final Integer explicit) {
        return explicit != null ? explicit : require(workers, "--workers", "number of workers");
    }

    /**
     * @param explicit the {@code --server} flag (or the host of {@code --udp}), or null when not given.
     * @return the server's host.
     */
    public String serverHostOr(final String explicit) {
        if (explicit != null) {
            return explicit;
        }
        if (serverHost == null) {
            throw notFound("--server", "server host");
        }
        return serverHost;
    }

    private static int require(final int value, final String flag, final String what) {
        if (value < 0) {
            throw notFound(flag, what);
        }
        return value;
    }

    private static IllegalArgumentException notFound(final String flag, final String what) {
        return new IllegalArgumentException(flag + " is not given and no scheduler variable sets the " + what + " (looked for "
            + String.join(", ", VARIABLES) + ")");
    }

    /** @return "rank 2 of 3 (SLURM_PROCID, SLURM_NTASKS)"-style summary for the log. */
    public String describe() {
        return "rank " + rank + " of " + workers + (sources.isEmpty() ? "" : " (from " + String.join(", ", sources.values().stream().distinct().toList())
            + ")");
    }

    private static int agree(final Map<String, String> env, final Map<String, String> sources, final String field, final List<String> names) {
        int value = -1;
        for (final String name : names) {
            if (env.get(name) == null) {
                continue;
            }
            final int v = parse(env, name);
            if (value < 0) {
                value = v;
                sources.put(field, name);
            } else if (v != value) {
                throw new IllegalArgumentException("the scheduler's variables disagree on the " + field + ": " + sources.get(field) + "=" + value
                    + ", " + name + "=" + v);
            }
        }
        return value;
    }

    private static int parse(final Map<String, String> env, final String name) {
        final String raw = Objects.requireNonNull(env.get(name)).trim();
        try {
            final int v = Integer.parseInt(raw);
            if (v < 0) {
                throw new NumberFormatException();
            }
            return v;
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a non-negative integer, got '" + raw + "'", e);
        }
    }

    /** The variable that lists every rank's host explicitly, comma-separated, by rank (as {@code --hosts}). */
    public static final String HOSTS_VARIABLE = "DLION_HOSTS";

    /**
     * Every rank's host, for a topology in which every rank serves a slice: {@value #HOSTS_VARIABLE} (one address per
     * rank), else Slurm's {@code SLURM_JOB_NODELIST} and {@code SLURM_TASKS_PER_NODE} with Slurm's default block
     * distribution (ranks 0 to k-1 on the first node, and so on; a {@code SLURM_DISTRIBUTION} other than block is
     * refused). torchrun, OpenMPI and Kubernetes do not give every rank's host: pass {@code --hosts}.
     *
     * @param env     the environment.
     * @param workers the number of ranks.
     * @return one host per rank, or null when no variable gives them.
     * @throws IllegalArgumentException when a variable is malformed or lists another number of ranks, naming it.
     */
    public static List<String> rankHosts(final Map<String, String> env, final int workers) {
        final String explicit = env.get(HOSTS_VARIABLE);
        if (explicit != null && !explicit.isBlank()) {
            final List<String> hosts = new ArrayList<>();
            for (final String h : explicit.split(",")) {
                if (h.isBlank()) {
                    throw new IllegalArgumentException(HOSTS_VARIABLE + " has an empty host: '" + explicit + "'");
                }
                hosts.add(h.trim());
            }
            return checkCount(hosts, workers, HOSTS_VARIABLE);
        }
        final String nodeList = env.get("SLURM_JOB_NODELIST");
        final String tasks = env.get("SLURM_TASKS_PER_NODE");
        if (nodeList == null || tasks == null) {
            return null;
        }
        final String distribution = env.get("SLURM_DISTRIBUTION");
        if (distribution != null && !distribution.isBlank() && !distribution.trim().startsWith("block")) {
            throw new IllegalArgumentException("SLURM_DISTRIBUTION=" + distribution + ": the ranks' hosts follow from Slurm's variables only"
                + " with the block distribution; pass --hosts (or " + HOSTS_VARIABLE + ")");
        }
        final List<String> nodes = expandNodeList(nodeList);
        final List<Integer> perNode = expandTasksPerNode(tasks);
        if (nodes.size() != perNode.size()) {
            throw new IllegalArgumentException("SLURM_JOB_NODELIST names " + nodes.size() + " nodes and SLURM_TASKS_PER_NODE=" + tasks + " "
                + perNode.size());
        }
        final List<String> hosts = new ArrayList<>();
        for (int n = 0; n < nodes.size(); n++) {
            for (int t = 0; t < perNode.get(n); t++) {
                hosts.add(nodes.get(n));
            }
        }
        return checkCount(hosts, workers, "SLURM_TASKS_PER_NODE=" + tasks);
    }

    private static List<String> checkCount(final List<String> hosts, final int workers, final String source) {
        if (hosts.size() != workers) {
            throw new IllegalArgumentException(source + " gives " + hosts.size() + " ranks' hosts for " + workers + " workers");
        }
        return List.copyOf(hosts);
    }

    /**
     * @param nodeList a Slurm node list, e.g. {@code gpu[03-05,11],cpu01}.
     * @return every node in order ({@code gpu03, gpu04, gpu05, gpu11, cpu01}), zero padding kept.
     */
    static List<String> expandNodeList(final String nodeList) {
        final List<String> nodes = new ArrayList<>();
        final String list = nodeList.trim();
        int i = 0;
        while (i < list.length()) {
            int end = i;
            while (end < list.length() && list.charAt(end) != ',' && list.charAt(end) != '[') {
                end++;
            }
            final String prefix = list.substring(i, end);
            if (end < list.length() && list.charAt(end) == '[') {
                final int close = list.indexOf(']', end);
                if (close < 0 || prefix.isEmpty() || close + 1 < list.length() && list.charAt(close + 1) != ',') {
                    throw new IllegalArgumentException("SLURM_JOB_NODELIST is malformed (or has more than one range in a name): '" + nodeList + "'");
                }
                for (final String range : list.substring(end + 1, close).split(",")) {
                    final String[] ends = range.split("-", -1);
                    try {
                        final int from = Integer.parseInt(ends[0]);
                        final int to = ends.length == 2 ? Integer.parseInt(ends[1]) : from;
                        if (ends.length > 2 || to < from) {
                            throw new NumberFormatException();
                        }
                        for (int k = from; k <= to; k++) {
                            nodes.add(prefix + String.format(java.util.Locale.ROOT, "%0" + ends[0].length() + "d", k));
                        }
                    } catch (final NumberFormatException e) {
                        throw new IllegalArgumentException("SLURM_JOB_NODELIST has a malformed range '" + range + "': '" + nodeList + "'", e);
                    }
                }
                i = close + 2;
            } else {
                if (prefix.isEmpty()) {
                    throw new IllegalArgumentException("SLURM_JOB_NODELIST has an empty node name: '" + nodeList + "'");
                }
                nodes.add(prefix);
                i = end + 1;
            }
        }
        return nodes;
    }

    /**
     * @param tasksPerNode Slurm's {@code SLURM_TASKS_PER_NODE}, e.g. {@code 2(x3),1}.
     * @return the tasks of every node in order ({@code 2, 2, 2, 1}).
     */
    static List<Integer> expandTasksPerNode(final String tasksPerNode) {
        final List<Integer> tasks = new ArrayList<>();
        for (final String part : tasksPerNode.trim().split(",")) {
            final java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)(?:\\(x(\\d+)\\))?").matcher(part.trim());
            if (!m.matches()) {
                throw new IllegalArgumentException("SLURM_TASKS_PER_NODE is malformed: '" + tasksPerNode + "'");
            }
            final int repeat = m.group(2) == null ? 1 : Integer.parseInt(m.group(2));
            for (int k = 0; k < repeat; k++) {
                tasks.add(Integer.parseInt(m.group(1)));
            }
        }
        return tasks;
    }

    /**
     * @param nodeList a Slurm node list, e.g. {@code gpu[03-08,11],cpu01} or {@code node7}.
     * @return its first host ({@code gpu03}, {@code node7}).
     */
    static String firstHost(final String nodeList) {
        final String list = nodeList.trim();
        final int bracket = list.indexOf('[');
        final int comma = list.indexOf(',');
        if (bracket < 0 || comma >= 0 && comma < bracket) {
            return comma < 0 ? list : list.substring(0, comma);
        }
        final String prefix = list.substring(0, bracket);
        final int close = list.indexOf(']', bracket);
        if (close < 0) {
            throw new IllegalArgumentException("SLURM_JOB_NODELIST is malformed: '" + nodeList + "'");
        }
        String first = list.substring(bracket + 1, close).split(",")[0];
        final int dash = first.indexOf('-');
        if (dash >= 0) {
            first = first.substring(0, dash);
        }
        return prefix + first;
    }
}
