import type { Logger } from "pino";
import type { CallRecord, CallsRepository } from "./calls-repository.js";
import { analyzeCall } from "./call-analysis.js";
import type { LlmFactory } from "../chat/chat-service.js";
import type { ProjectService, ResolvedProject } from "../projects/project-service.js";
import { recordingKey, type RecordingStorage } from "./recordings.js";
import { speakerOfRole } from "./speakers.js";
import type { CallAnalysis, CapabilitiesOf, RecordingRenderer, TimedUtterance } from "./ports.js";

/**
 * What an ended call leaves behind, produced off the reply path by a durable job: the recording (the utterances
 * stored in the thread's history, synthesized and laid out at the moments they were said), the transcript with word
 * timings that comes with it, and the post-call analysis from the project's model. Each part that fails is left
 * null rather than holding the others back.
 */
export class CallResults {
  constructor(
    private readonly calls: CallsRepository,
    private readonly projects: ProjectService,
    private readonly storage: RecordingStorage,
    private readonly renderer: RecordingRenderer,
    private readonly llm: LlmFactory,
    private readonly log: Logger,
    private readonly capabilities: CapabilitiesOf,
  ) {}

  /** Idempotent: a call already processed, or never connected, is left as it is. Returns the updated call. */
  async process(callId: string): Promise<CallRecord | undefined> {
    const call = await this.calls.findById(callId);
    if (!call || call.processed_at !== null || call.started_at === null || (call.status !== "ended" && call.status !== "error")) return undefined;
    const startedAt = call.started_at.getTime();
    const utterances = (await this.calls.utterances(call.thread_id, call.id)).map((utterance) => ({
      role: speakerOfRole(utterance.role),
      content: utterance.content,
      startSeconds: Math.max(0, (utterance.created_at.getTime() - startedAt) / 1000),
    }));
    const resolved = await this.resolve(call);
    if (call.recording_key !== null) {
      // Recorded live as the call ended (see CallLifecycle.setMediaFinalizer): only the analysis is left.
      return this.calls.saveAnalysis(call.id, await this.analyze(resolved, utterances));
    }
    let transcriptObject: TimedUtterance[] = utterances.map((utterance) => ({ role: utterance.role, content: utterance.content, words: [] }));
    let key: string | null = null;
    if (this.capabilities(call.provider).records === "live") {
      // The recording is the call's real audio, which its speech pipeline stored; a real caller's voice is not made up.
      key = (await this.storage.size(recordingKey(call.id))) !== undefined ? recordingKey(call.id) : null;
    } else if (utterances.length > 0) {
      try {
        const recording = await this.renderer.render(utterances);
        await this.storage.put(recordingKey(call.id), recording.wav);
        key = recordingKey(call.id);
        transcriptObject = recording.transcriptObject;
      } catch (error) {
        this.log.error({ err: error, callId }, "rendering a call recording failed");
      }
    }
    return this.calls.saveResults(call.id, { transcriptObject, recordingKey: key, analysis: await this.analyze(resolved, utterances) });
  }

  private async analyze(resolved: ResolvedProject, utterances: { role: "agent" | "user"; content: string }[]): Promise<CallAnalysis | null> {
    try {
      const agent = resolved.config.agent;
      return await analyzeCall({
        transcript: utterances.map((utterance) => ({ role: utterance.role, content: utterance.content })),
        fields: resolved.config.voice.analysis_fields,
        provider: this.llm(agent, resolved.secrets.agentApiKey),
        providerKind: agent.provider,
      });
    } catch (error) {
      this.log.warn({ err: error, projectId: resolved.project.id }, "analysing a call failed");
      return null;
    }
  }

  private resolve(call: CallRecord): Promise<ResolvedProject> {
    return this.projects.resolveById(call.organization_id, call.project_id, call.config_version_id);
  }
}
