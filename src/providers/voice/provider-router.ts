import type { DisconnectionReason } from "../../domain/calls/call-states.js";
import type { VoiceProviderName } from "../../domain/projects/project-config.js";
import type {
  PhoneCallRequest,
  PlacedCall,
  ProviderCall,
  RemoteCall,
  VoiceProvider,
  WebCallClient,
  WebCallConnection,
  WebCallHost,
} from "./types.js";

/**
 * Every voice provider of the instance behind one VoiceProvider: a call goes to the provider of the project version
 * it was created with. Web-call media hosted by Parley itself is the simulated provider's alone; Twilio carries
 * phone lines only, so a Twilio project's web calls are hosted by Parley as well.
 */
export class ProviderRouter implements VoiceProvider, WebCallHost {
  readonly name = "router";

  constructor(
    private readonly providers: Record<VoiceProviderName, VoiceProvider>,
    private readonly host: WebCallHost,
  ) {}

  createPhoneCall(request: PhoneCallRequest): Promise<PlacedCall | void> {
    return this.providers[request.config.voice.provider].createPhoneCall(request);
  }

  createWebCall(request: ProviderCall): Promise<PlacedCall | void> {
    const provider = request.config.voice.provider === "twilio" ? "simulated" : request.config.voice.provider;
    return this.providers[provider].createWebCall(request);
  }

  async hangUp(call: RemoteCall): Promise<void> {
    await this.providers[call.config.voice.provider].hangUp?.(call);
  }

  async transfer(call: RemoteCall, number: string): Promise<void> {
    const provider = this.providers[call.config.voice.provider];
    if (!provider.transfer) throw new Error(`the ${provider.name} provider cannot transfer a call by its API`);
    await provider.transfer(call, number);
  }

  join(request: ProviderCall, client: WebCallClient, options: { audio: boolean }): WebCallConnection {
    return this.host.join(request, client, options);
  }

  /** Each provider hangs up what it carries of the call, if anything: the others have nothing of it. */
  async endCall(callId: string, reason: DisconnectionReason): Promise<void> {
    await Promise.all(Object.values(this.providers).map((provider) => provider.endCall(callId, reason)));
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.providers).map((provider) => provider.close()));
  }
}
